//! Parquet and Arrow files written here with every time and price type the
//! reader accepts give the bars a CSV of the same prices gives; bad ones are
//! clear errors naming the row.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Date32Array, Float32Array, Float64Array, Int64Array, ListArray, RecordBatch,
    StringArray, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampSecondArray,
    UInt32Array,
};
use arrow_schema::{Field, Schema};
use sieve_core::data::{load, parse, parse_csv, Bars, LoadOptions};

fn parquet(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

fn feather(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &batch.schema()).unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn read(bytes: Vec<u8>) -> Result<Bars, String> {
    parse(bytes, &LoadOptions::default()).map(|l| l.bars)
}

/// Both binary formats of `b` give `want`.
fn assert_both(b: &RecordBatch, want: &Bars, what: &str) {
    assert_eq!(read(parquet(b)).as_ref(), Ok(want), "Parquet, {what}");
    assert_eq!(read(feather(b)).as_ref(), Ok(want), "Arrow, {what}");
}

const DAY: i64 = 86_400;
/// 2024-01-01 in unix seconds.
const T0: i64 = 1_704_067_200;

fn prices() -> [ArrayRef; 4] {
    [
        Arc::new(Float64Array::from(vec![10.0, 11.0, 12.5])),
        Arc::new(Float64Array::from(vec![11.0, 12.0, 13.0])),
        Arc::new(Float64Array::from(vec![9.5, 10.5, 12.0])),
        Arc::new(Float64Array::from(vec![10.5, 11.5, 12.25])),
    ]
}

fn with_time(time: ArrayRef) -> RecordBatch {
    let [o, h, l, c] = prices();
    batch(vec![
        ("Time", time),
        ("Open", o),
        ("High", h),
        ("Low", l),
        ("Close", c),
    ])
}

#[test]
fn every_time_type_reads_as_the_same_instants() {
    let want = parse_csv(
        b"date,open,high,low,close\n2024-01-01,10,11,9.5,10.5\n2024-01-02,11,12,10.5,11.5\n2024-01-03,12.5,13,12,12.25\n",
    )
    .unwrap();
    let secs: Vec<i64> = (0..3).map(|i| T0 + i * DAY).collect();
    let cases: Vec<(&str, ArrayRef)> = vec![
        (
            "timestamp[s]",
            Arc::new(TimestampSecondArray::from(secs.clone())),
        ),
        (
            "timestamp[µs, Asia/Tokyo]",
            Arc::new(
                TimestampMicrosecondArray::from(
                    secs.iter().map(|s| s * 1_000_000).collect::<Vec<_>>(),
                )
                .with_timezone("Asia/Tokyo"),
            ),
        ),
        (
            "date32",
            Arc::new(Date32Array::from(
                secs.iter().map(|s| (s / DAY) as i32).collect::<Vec<_>>(),
            )),
        ),
        (
            "int64 unix ms",
            Arc::new(Int64Array::from(
                secs.iter().map(|s| s * 1000).collect::<Vec<_>>(),
            )),
        ),
        (
            "uint32 unix s",
            Arc::new(UInt32Array::from(
                secs.iter().map(|&s| s as u32).collect::<Vec<_>>(),
            )),
        ),
        (
            "text",
            Arc::new(StringArray::from(vec![
                "2024-01-01",
                "2024-01-02",
                "2024-01-03",
            ])),
        ),
    ];
    for (what, time) in cases {
        assert_both(&with_time(time), &want, what);
    }
}

#[test]
fn integer_prices_read_as_their_values_and_float32_as_its_nearest_f64() {
    let time: ArrayRef = Arc::new(Int64Array::from(vec![T0, T0 + DAY]));
    let int = |v: Vec<i64>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
    let b = batch(vec![
        ("date", time.clone()),
        ("open", int(vec![100, 102])),
        ("high", int(vec![103, 104])),
        ("low", int(vec![99, 101])),
        ("close", int(vec![102, 103])),
    ]);
    let want = parse_csv(
        b"date,open,high,low,close\n2024-01-01,100,103,99,102\n2024-01-02,102,104,101,103\n",
    )
    .unwrap();
    assert_both(&b, &want, "int64 prices");

    let f32s = |v: Vec<f32>| -> ArrayRef { Arc::new(Float32Array::from(v)) };
    let b = batch(vec![
        ("date", time),
        ("open", f32s(vec![1.1, 1.2])),
        ("high", f32s(vec![1.3, 1.4])),
        ("low", f32s(vec![1.0, 1.1])),
        ("close", f32s(vec![1.2, 1.3])),
    ]);
    let bars = read(parquet(&b)).unwrap();
    assert_eq!(bars.open, vec![f64::from(1.1f32), f64::from(1.2f32)]);
}

#[test]
fn extra_columns_may_hold_any_type() {
    // A list column (which no CSV could hold) next to the prices: a
    // problem only for a rule that reads it.
    let tags = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(vec![
        Some(vec![Some(1)]),
        None,
        Some(vec![]),
    ]);
    let [o, h, l, c] = prices();
    let time: ArrayRef = Arc::new(Int64Array::from(vec![T0, T0 + DAY, T0 + 2 * DAY]));
    let b = batch(vec![
        ("tags", Arc::new(tags)),
        ("timestamp", time),
        ("open", o),
        ("high", h),
        ("low", l),
        ("close", c),
    ]);
    for bytes in [parquet(&b), feather(&b)] {
        let bars = read(bytes).unwrap();
        assert_eq!(bars.len(), 3);
        let problem = bars.extra("tags").unwrap().problem.as_deref().unwrap();
        assert!(
            problem.contains("tags") && problem.contains("List"),
            "{problem}"
        );
    }
}

/// Typed extra columns: integers, floats with nulls and NaN, true/false as
/// 1/0, numbers written as text.
#[test]
fn typed_extra_columns_read_as_numbers() {
    let [o, h, l, c] = prices();
    let time: ArrayRef = Arc::new(Int64Array::from(vec![T0, T0 + DAY, T0 + 2 * DAY]));
    let b = batch(vec![
        ("timestamp", time),
        ("open", o),
        ("high", h),
        ("low", l),
        ("close", c),
        ("n", Arc::new(Int64Array::from(vec![3, -1, 0]))),
        (
            "x",
            Arc::new(Float64Array::from(vec![Some(0.25), None, Some(f64::NAN)])),
        ),
        (
            "long?",
            Arc::new(arrow_array::BooleanArray::from(vec![true, false, true])),
        ),
        ("txt", Arc::new(StringArray::from(vec!["1.5", "", "NA"]))),
    ]);
    for bytes in [parquet(&b), feather(&b)] {
        let bars = read(bytes).unwrap();
        let get = |n: &str| bars.extra(n).unwrap().values.clone();
        assert_eq!(get("n"), [3.0, -1.0, 0.0]);
        let x = get("x");
        assert!(x[0] == 0.25 && x[1].is_nan() && x[2].is_nan());
        assert_eq!(get("long?"), [1.0, 0.0, 1.0]);
        let t = get("txt");
        assert!(t[0] == 1.5 && t[1].is_nan() && t[2].is_nan());
        assert!(bars.extra.iter().all(|c| c.problem.is_none()));
    }
}

#[test]
fn bad_columnar_files_name_the_row_or_the_column() {
    let time = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
    let f = |v: Vec<Option<f64>>| -> ArrayRef { Arc::new(Float64Array::from(v)) };
    let ok = f(vec![Some(10.0), Some(10.0), Some(10.0)]);
    let with = |t: ArrayRef, close: ArrayRef| {
        batch(vec![
            ("time", t),
            ("open", ok.clone()),
            ("high", ok.clone()),
            ("low", ok.clone()),
            ("close", close),
        ])
    };
    let t = time(vec![Some(T0), Some(T0 + DAY), Some(T0 + 2 * DAY)]);
    let cases: Vec<(RecordBatch, &[&str])> = vec![
        (
            with(time(vec![Some(T0), None, Some(T0 + DAY)]), ok.clone()),
            &["row 2", "time is empty (null)"],
        ),
        (
            with(t.clone(), f(vec![Some(10.0), Some(10.0), Some(f64::NAN)])),
            &["row 3", "column 'close'", "not a finite number"],
        ),
        (
            with(t.clone(), f(vec![Some(10.0), Some(-1.0), Some(10.0)])),
            &["row 2", "not positive"],
        ),
        (
            with(
                time(vec![Some(T0), Some(T0 + DAY), Some(T0 + DAY)]),
                ok.clone(),
            ),
            &["row 3", "duplicate time (same as row 2)"],
        ),
        (
            with(
                time(vec![Some(T0), Some(-5_000_000_000), Some(T0 + DAY)]),
                ok.clone(),
            ),
            &["row 2", "outside 1900..2200"],
        ),
        (
            with(
                Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0])),
                ok.clone(),
            ),
            &["column 'time' holds Float64", "expected a timestamp"],
        ),
        (
            with(t.clone(), Arc::new(StringArray::from(vec!["1", "2", "3"]))),
            &["column 'close' holds Utf8", "expected numbers"],
        ),
    ];
    for (b, words) in cases {
        for (format, bytes) in [("Parquet", parquet(&b)), ("Arrow", feather(&b))] {
            let e = read(bytes).unwrap_err();
            for w in words {
                assert!(e.contains(w), "{format}: '{w}' not in: {e}");
            }
        }
    }

    let good = with(t, ok.clone());
    // data.columns is for header-less CSVs only.
    let e = parse(
        parquet(&good),
        &LoadOptions {
            columns: Some(vec!["time".into()]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("data.columns") && e.contains("Parquet"), "{e}");
    // An empty file of the right schema.
    let e = read(parquet(&good.slice(0, 0))).unwrap_err();
    assert!(e.contains("no rows"), "{e}");
    // Feather v1 is named, not misread as CSV.
    let e = read(b"FEA1\0\0\0\0garbage".to_vec()).unwrap_err();
    assert!(e.contains("Feather version 1"), "{e}");
    // Cut short.
    let bytes = feather(&good);
    let e = read(bytes[..bytes.len() / 2].to_vec()).unwrap_err();
    assert!(e.contains("not a readable Arrow file"), "{e}");
}

#[test]
fn a_file_named_parquet_that_is_not_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let load_err = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = sieve_core::data::load(&path, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(name), "{e}");
        e
    };
    let csv = b"date,open,high,low,close\n2024-01-01,1,1,1,1\n";
    let e = load_err("prices.parquet", csv);
    assert!(e.contains("does not start like Parquet data"), "{e}");
    // A Feather v1 file gets its own message whatever its name says.
    let e = load_err("old.feather", b"FEA1\0\0\0\0garbage");
    assert!(e.contains("Feather version 1"), "{e}");
    // UTF-16 text (a byte-order mark, then two bytes per character).
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(csv.iter().flat_map(|&b| [b, 0]))
        .collect();
    let e = load_err("export.csv", &utf16);
    assert!(e.contains("UTF-16") && e.contains("UTF-8"), "{e}");
}

/// What `write_bars` writes loads back to the same bars in every format.
#[test]
fn written_files_load_back_identically_in_every_format() {
    let mut daily = sieve_core::data::synth(500, 9);
    // Extra columns (one with undefined bars, one with a name that needs
    // quoting in CSV) come back too.
    let values = |f: fn(usize) -> f64| (0..daily.len()).map(f).collect::<Vec<f64>>();
    daily.extra = vec![
        sieve_core::data::ExtraColumn {
            name: "signal".into(),
            values: values(|i| (i as f64 * 0.37).sin() * 1e-3),
            problem: None,
        },
        sieve_core::data::ExtraColumn {
            name: "My \"odd\", name".into(),
            values: values(|i| {
                if i % 7 == 0 {
                    f64::NAN
                } else {
                    i as f64 - 250.5
                }
            }),
            problem: None,
        },
    ];
    // Minute bars starting at a midnight, and bars with milliseconds: the CSV
    // column must use one style throughout.
    let mut minutes = daily.clone();
    let mut millis = daily.clone();
    for i in 0..daily.len() {
        minutes.time[i] = daily.time[0] + i as i64 * 60_000;
        millis.time[i] = daily.time[0] + i as i64 * 60_000 + (i as i64 % 3) * 250;
    }
    let dir = tempfile::tempdir().unwrap();
    for (kind, bars) in [
        ("daily", &daily),
        ("minutes", &minutes),
        ("millis", &millis),
    ] {
        for name in ["b.csv", "b.parquet", "b.feather", "b.arrow"] {
            let path = dir.path().join(name);
            sieve_core::data::write_bars(bars, &path).unwrap();
            let mut back = sieve_core::data::load(&path, &LoadOptions::default())
                .unwrap()
                .bars;
            // NaN is not equal to itself: extra values compare by bits.
            let bits = |b: &sieve_core::data::Bars| -> Vec<(String, Vec<u64>)> {
                b.extra
                    .iter()
                    .map(|c| {
                        (
                            c.name.clone(),
                            c.values.iter().map(|v| v.to_bits()).collect(),
                        )
                    })
                    .collect()
            };
            assert_eq!(bits(&back), bits(bars), "{kind} {name}");
            back.extra.clone_from(&bars.extra);
            for c in &mut back.extra {
                c.values.retain(|v| !v.is_nan());
            }
            let mut want = bars.clone();
            for c in &mut want.extra {
                c.values.retain(|v| !v.is_nan());
            }
            assert_eq!(back, want, "{kind} {name}");
        }
    }
}

/// A `date` column with a `time` column: text times of day join typed dates
/// (date32) as they join text dates; a typed `time` column is the time.
#[test]
fn a_date_and_a_time_column_make_one_time() {
    let hourly = |h: i64| (T0 + h * 3600) * 1000;
    let want_times = vec![hourly(0), hourly(1), hourly(2)];
    let [o, h, l, c] = prices();
    let cols = |date: ArrayRef, time: ArrayRef| {
        batch(vec![
            ("date", date),
            ("time", time),
            ("open", o.clone()),
            ("high", h.clone()),
            ("low", l.clone()),
            ("close", c.clone()),
        ])
    };
    let day = (T0 / DAY) as i32;
    let clock: ArrayRef = Arc::new(StringArray::from(vec!["00:00", "01:00", "02:00"]));
    let typed = cols(Arc::new(Date32Array::from(vec![day; 3])), clock.clone());
    let text = cols(Arc::new(StringArray::from(vec!["2024-01-01"; 3])), clock);
    for (what, b) in [("date32 + text", &typed), ("text + text", &text)] {
        let bars = read(parquet(b)).unwrap();
        assert_eq!(bars.time, want_times, "{what}");
    }
    // Both typed timestamps: the `time` column is the time.
    let stamps: ArrayRef =
        Arc::new(TimestampMillisecondArray::from(want_times.clone()).with_timezone("UTC"));
    let both = cols(Arc::new(Date32Array::from(vec![day; 3])), stamps);
    assert_eq!(read(parquet(&both)).unwrap().time, want_times);
}

/// A Parquet file on disk is read a page at a time, in memory as bytes:
/// damaged files (bits flipped in the pages, a stretch cut out before the
/// footer) give the same message both ways, and the decoding thread stops
/// at the decoder's first error rather than asking it again.
#[test]
fn a_damaged_parquet_file_says_the_same_from_disk_as_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    // `sieve synth --bars 30000 --bar-seconds 60`.
    let mut bars = sieve_core::data::synth(30_000, 42);
    let t0 = bars.time[0];
    for (i, t) in bars.time.iter_mut().enumerate() {
        *t = t0 + i as i64 * 60_000;
    }
    let path = dir.path().join("bars.parquet");
    sieve_core::data::write_bars(&bars, &path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let mut damaged: Vec<Vec<u8>> = Vec::new();
    // A stretch cut out just before the footer: offsets past the end.
    let tail = good.len() - 4_000;
    damaged.push([&good[..tail - 60_000], &good[tail..]].concat());
    // (Damaged file 1.) Two bits a review found: zstd reports the corruption, and the
    // decoder must not be asked for another batch after that error (it
    // panicked, which turned the message into "the decoder failed").
    let mut bytes = good.clone();
    bytes[265_715] ^= 4;
    bytes[1_295_893] ^= 128;
    damaged.push(bytes);
    // Single bits flipped through the data pages.
    let mut x = 5u64;
    for _ in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut bytes = good.clone();
        let at = 8 + (x as usize) % (good.len() - 4_100);
        bytes[at] ^= 1 << (x % 8);
        damaged.push(bytes);
    }
    let mut refused = 0;
    for (k, bytes) in damaged.into_iter().enumerate() {
        let file = dir.path().join(format!("damaged{k}.parquet"));
        std::fs::write(&file, &bytes).unwrap();
        let from_disk = load(&file, &LoadOptions::default())
            .map(|l| l.bars)
            .map_err(|e| match e {
                sieve_core::Error::Data { message, .. } => message,
                e => e.to_string(),
            });
        let from_memory = parse(bytes, &LoadOptions::default()).map(|l| l.bars);
        assert_eq!(
            format!("{from_disk:?}"),
            format!("{from_memory:?}"),
            "damaged file {k}"
        );
        refused += usize::from(from_disk.is_err());
        if k == 1 {
            // The decoder's own words, not the guard's.
            let e = from_disk.unwrap_err();
            assert!(e.ends_with("External: Data corruption detected"), "{e}");
        }
    }
    assert!(refused > 5, "only {refused} damaged files refused");
    // The file the two bits came from is the one `sieve synth` writes.
    assert_eq!(good.len(), 1_416_173);
}
