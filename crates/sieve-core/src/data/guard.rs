//! Decoders (Arrow, Parquet) that panic on corrupt bytes: the panic becomes
//! an error naming the format, and its message is silenced, on the loading
//! thread and on a decoding thread of its own.

use crate::data::Loaded;

/// Runs a binary format's decoder, turning a panic into an error: the
/// Arrow and Parquet crates can panic on corrupt bytes (fuzzing found an
/// out-of-bounds buffer slice in arrow-ipc), and no panic may reach the
/// user. The panic message is silenced on this thread while the decoder runs.
pub(crate) fn guarded(
    format: &str,
    decode: impl FnOnce() -> std::result::Result<Loaded, String>,
) -> std::result::Result<Loaded, String> {
    let outcome = quietly(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)));
    outcome.unwrap_or_else(|_| {
        Err(format!(
            "not a readable {format} file: its contents are corrupt (the decoder failed)"
        ))
    })
}

/// Runs `f` with panic messages silenced on this thread (a decoder's
/// thread of [`guarded`]'s, whose panic `guarded` turns into an error).
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    silence_decoder_panics();
    let was = SILENT.with(|s| s.replace(true));
    let out = f();
    SILENT.with(|s| s.set(was));
    out
}

thread_local! {
    /// Whether this thread is inside [`guarded`] or [`quietly`].
    static SILENT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs, once, a panic hook that stays quiet on threads inside
/// [`guarded`] and defers to the previous hook everywhere else (swapping
/// hooks per call would race between threads loading at once).
fn silence_decoder_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !SILENT.with(|s| s.get()) {
                previous(info);
            }
        }));
    });
}
