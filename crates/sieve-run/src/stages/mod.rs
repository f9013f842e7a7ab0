//! The optimize loop's stages, one file each: [`sweep`], [`verify`]. Each
//! advances one iteration's record; the loop in `optimize` drives them and
//! holds the stop rules.

pub(crate) mod sweep;
pub(crate) mod verify;
