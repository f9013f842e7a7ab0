//! The loaders on files: columns found by name in any case and order,
//! extra columns kept with their problems, and each bad file one clear
//! error naming the line.

use sieve_core::data::{parse_csv, parse_csv_with, Bars, LoadOptions};

const GOOD: &str =
    "date,open,high,low,close,volume\n2020-01-01,10,11,9,10.5,100\n2020-01-02,10.5,12,10,11,200\n";

fn err(text: &str) -> String {
    match parse_csv(text.as_bytes()) {
        Ok(_) => panic!("loaded but should fail:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn good_file_loads_columnar() {
    let b = parse_csv(GOOD.as_bytes()).unwrap();
    assert_eq!(b.close, vec![10.5, 11.0]);
    assert_eq!(b.volume, Some(vec![100.0, 200.0]));
    assert_eq!(b.time[1] - b.time[0], 86_400_000);
}

#[test]
fn pandas_unnamed_index_column_loads() {
    let text = ",Open,High,Low,Close,Adj Close\n2020-01-01,10,11,9,10.5,10.4\n2020-01-02,10.5,12,10,11,10.9\n";
    let b = parse_csv(text.as_bytes()).unwrap();
    assert_eq!(b.open, vec![10.0, 10.5]);
    assert_eq!(b.volume, None);
}

#[test]
fn columns_match_case_insensitively_in_any_order_with_extras() {
    let text = "Close,Timestamp,extra,LOW,High,open\n10.5,1577836800,x,9,11,10\n";
    let b = parse_csv(text.as_bytes()).unwrap();
    assert_eq!(
        (b.open[0], b.high[0], b.low[0], b.close[0]),
        (10.0, 11.0, 9.0, 10.5)
    );
    assert_eq!(b.time[0], 1_577_836_800_000);
}

/// Every other named column is kept for the rules: numbers as written,
/// missing-value marks undefined, text remembered as a problem (an error
/// only where a rule reads it); the adjusted close and volume are not extra.
#[test]
fn extra_columns_are_kept_with_their_problems() {
    let text = "date,open,high,low,close,Adj Close,volume,signal,My Score,ticker,<SPREAD>,long\n\
                2020-01-01,10,11,9,10.5,10.4,100,0.5,,GOOG,2,True\n\
                2020-01-02,10,11,9,10.5,10.4,100,-1e-3,NA,GOOG,3,false\n\
                2020-01-03,10,11,9,10.5,10.4,100,2,inf,GOOG,4,TRUE\n";
    let b = parse_csv(text.as_bytes()).unwrap();
    let names: Vec<&str> = b.extra.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["signal", "My Score", "ticker", "SPREAD", "long"]);
    assert_eq!(b.extra[0].values, [0.5, -1e-3, 2.0]);
    assert_eq!(b.extra[0].problem, None);
    // Empty, NA and ±inf are undefined; True/False (any case) are 1/0.
    let score = &b.extra("My Score").unwrap().values;
    assert!(score.iter().all(|v| v.is_nan()));
    assert_eq!(b.extra("long").unwrap().values, [1.0, 0.0, 1.0]);
    let ticker = b.extra("ticker").unwrap();
    let problem = ticker.problem.as_deref().unwrap();
    assert!(
        problem.contains("line 2") && problem.contains("GOOG"),
        "{problem}"
    );
    assert!(ticker.values.iter().all(|v| v.is_nan()));
    // Asked for some columns only: the rest are named, not read.
    let options = LoadOptions {
        extra: Some(vec!["SPREAD".into(), "absent".into()]),
        ..Default::default()
    };
    let b = parse_csv_with(text.as_bytes(), &options).unwrap().bars;
    assert_eq!(b.extra.len(), 1);
    assert_eq!(b.extra("SPREAD").unwrap().values, [2.0, 3.0, 4.0]);
    assert_eq!(b.unread, ["signal", "My Score", "ticker", "long"]);
    assert_eq!(
        b.other_columns(),
        ["SPREAD", "signal", "My Score", "ticker", "long"]
    );
}

/// The separator is the one the header holds most outside quotes: a
/// column name may hold another.
#[test]
fn a_separator_inside_a_column_name_does_not_decide() {
    for text in [
        "date;open;high;low;close;a,b\n2020-01-01;10;11;9;10.5;1\n",
        "date,open,high,low,close,\"a;b\",\"c,d\"\n2020-01-01,10,11,9,10.5,1,2\n",
        "date\topen\thigh\tlow\tclose\ta,b;c\n2020-01-01\t10\t11\t9\t10.5\t1\n",
    ] {
        let b = parse_csv(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!((b.close[0], b.extra[0].values[0]), (10.5, 1.0), "{text}");
    }
}

#[test]
fn bom_and_crlf_are_accepted() {
    let text = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
    assert_eq!(parse_csv(text.as_bytes()).unwrap().len(), 2);
}

/// A bad cell is reported at its file line whether lines end in LF or
/// CRLF, in a price column or a column of the user's, with a header or
/// with `data.columns` (CRLF lines were reported one line early).
#[test]
fn bad_cells_name_their_file_line_with_crlf_too() {
    let rows = |bad_price: bool| {
        (0..6)
            .map(|i| {
                let price = if bad_price && i == 3 { "abc" } else { "1.5" };
                let mine = if !bad_price && i == 3 { "abc" } else { "0.3" };
                format!("2020-01-0{},1,2,0.5,{price},{mine}", i + 1)
            })
            .collect::<Vec<_>>()
    };
    for ending in ["\n", "\r\n"] {
        for bad_price in [true, false] {
            // Row 3 is file line 5 below a header, line 4 without one.
            let with_header = std::iter::once("date,open,high,low,close,mine".to_string())
                .chain(rows(bad_price))
                .collect::<Vec<_>>()
                .join(ending)
                + ending;
            let without = rows(bad_price).join(ending) + ending;
            let columns = LoadOptions {
                columns: Some(
                    ["date", "open", "high", "low", "close", "mine"]
                        .map(String::from)
                        .to_vec(),
                ),
                ..LoadOptions::default()
            };
            for (text, options, line) in [
                (with_header, LoadOptions::default(), 5),
                (without, columns, 4),
            ] {
                let what = format!("{ending:?}, bad price {bad_price}, {line}");
                let message = match parse_csv_with(text.as_bytes(), &options) {
                    Err(e) => e,
                    Ok(loaded) => loaded.bars.extra[0]
                        .problem
                        .clone()
                        .unwrap_or_else(|| panic!("{what}: no problem noted")),
                };
                assert!(
                    message.contains(&format!("line {line}:")),
                    "{what}: {message}"
                );
            }
        }
    }
}

#[test]
fn empty_file() {
    assert!(err("").contains("empty file"));
    assert!(err("\n\n").contains("empty file"));
}

#[test]
fn header_only() {
    let e = err("date,open,high,low,close\n");
    assert!(e.contains("line 1") && e.contains("no bars"), "{e}");
}

#[test]
fn missing_column_is_named() {
    let e = err("date,open,high,close\n2020-01-01,1,2,1.5\n");
    assert!(e.contains("line 1") && e.contains("low"), "{e}");
    let e = err("day,open,high,low,close\n2020-01-01,1,2,1,1.5\n");
    assert!(e.contains("line 1") && e.contains("time column"), "{e}");
}

#[test]
fn ambiguous_separators_get_a_hint() {
    // Semicolons alone load; a header mixing `;` and tabs splits at the
    // more frequent one, and the error shows the names that gives.
    assert!(parse_csv(b"date;open;high;low;close\n2020-01-01;1;2;1;1.5\n").is_ok());
    let e = err("date;open\thigh;low;close\n2020-01-01;1\t2;1;1.5\n");
    assert!(
        e.contains("line 1") && e.contains("found: date, open\thigh"),
        "{e}"
    );
}

#[test]
fn unparsable_number() {
    let e = err(&GOOD.replace("10.5,12", "abc,12"));
    assert!(
        e.contains("line 3") && e.contains("open") && e.contains("abc"),
        "{e}"
    );
}

#[test]
fn nan_and_inf() {
    let e = err(&GOOD.replace("10,11,9,10.5", "10,11,9,NaN"));
    assert!(
        e.contains("line 2") && e.contains("close") && e.contains("finite"),
        "{e}"
    );
    let e = err(&GOOD.replace("10.5,12,10,11", "10.5,inf,10,11"));
    assert!(e.contains("line 3") && e.contains("high"), "{e}");
}

#[test]
fn non_positive_price() {
    let e = err(&GOOD.replace("10,11,9,10.5", "10,11,0,10.5"));
    assert!(e.contains("line 2") && e.contains("not positive"), "{e}");
    let e = err(&GOOD.replace("10.5,12,10,11", "-10.5,12,10,11"));
    assert!(e.contains("line 3") && e.contains("not positive"), "{e}");
}

#[test]
fn high_below_open_or_close() {
    let e = err(&GOOD.replace("10,11,9,10.5", "10,10.2,9,10.5"));
    assert!(
        e.contains("line 2") && e.contains("high 10.2 is below"),
        "{e}"
    );
}

#[test]
fn low_above_open_or_close() {
    let e = err(&GOOD.replace("10.5,12,10,11", "10.5,12,10.7,11"));
    assert!(
        e.contains("line 3") && e.contains("low 10.7 is above"),
        "{e}"
    );
}

#[test]
fn duplicate_time() {
    let e = err(&GOOD.replace("2020-01-02", "2020-01-01"));
    assert!(
        e.contains("line 3") && e.contains("duplicate") && e.contains("line 2"),
        "{e}"
    );
}

#[test]
fn decreasing_time() {
    let e = err(&GOOD.replace("2020-01-02", "2019-12-31"));
    assert!(e.contains("line 3") && e.contains("backwards"), "{e}");
}

#[test]
fn unparsable_time() {
    let e = err(&GOOD.replace("2020-01-02", "02/01/2020"));
    assert!(e.contains("line 3") && e.contains("02/01/2020"), "{e}");
}

#[test]
fn wrong_field_count() {
    let e = err(&GOOD.replace("10.5,12,10,11,200", "10.5,12,10,11"));
    assert!(e.contains("line 3") && e.contains("fields"), "{e}");
}

#[test]
fn negative_volume() {
    let e = err(&GOOD.replace(",200", ",-5"));
    assert!(e.contains("line 3") && e.contains("volume"), "{e}");
}

#[test]
fn binary_file() {
    let e = match parse_csv(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") {
        Ok(_) => panic!("binary loaded"),
        Err(e) => e,
    };
    assert!(e.contains("line 1") && e.contains("binary"), "{e}");
}

#[test]
fn many_offenders_are_summarised() {
    let mut text = String::from("date,open,high,low,close\n");
    for i in 1..=20 {
        text.push_str(&format!("2020-01-{i:02},1,2,1,x\n"));
    }
    let e = err(&text);
    assert!(
        e.contains("line 2") && e.contains("line 6") && !e.contains("line 7"),
        "{e}"
    );
    assert!(e.contains("15 more"), "{e}");
}

#[test]
fn file_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("sieve-loader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prices.csv");
    std::fs::write(&path, GOOD.replace("abc", "x").replace("10.5,12", "zz,12")).unwrap();
    let e = sieve_core::data::load(&path, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("prices.csv") && e.contains("line 3"), "{e}");
    let e = sieve_core::data::load(&dir.join("missing.csv"), &Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.csv"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn microsecond_and_nanosecond_times_by_magnitude() {
    // Binance spot klines since 2025: open time in µs.
    let us =
        "timestamp,open,high,low,close\n1735689600000000,10,11,9,10\n1735693200000000,10,11,9,10\n";
    let b = parse_csv(us.as_bytes()).unwrap();
    assert_eq!(b.time, vec![1_735_689_600_000, 1_735_693_200_000]);
    let ns = "timestamp,open,high,low,close\n1735689600000000000,10,11,9,10\n";
    assert_eq!(
        parse_csv(ns.as_bytes()).unwrap().time,
        vec![1_735_689_600_000]
    );
}

#[test]
fn times_outside_1900_2200_name_the_line() {
    let e = err("date,open,high,low,close\n2020-01-01,10,11,9,10\n2250-01-02,10,11,9,10\n");
    assert!(
        e.contains("line 3") && e.contains("outside 1900..2200"),
        "{e}"
    );
}

#[test]
fn a_row_of_empty_fields_is_refused_by_line() {
    let e = err("date,open,high,low,close\n2020-01-01,10,11,9,10\n,,,,\n2020-01-03,10,11,9,10\n");
    assert!(
        e.contains("line 3") && e.contains("every field is empty"),
        "{e}"
    );
}

#[test]
fn adjusted_close_is_noticed_and_applied_on_request() {
    let text =
        "Date,Open,High,Low,Close,Adj Close\n2020-01-01,10,12,8,10,5\n2020-01-02,20,22,18,20,20\n";
    let plain = parse_csv_with(text.as_bytes(), &LoadOptions::default()).unwrap();
    assert_eq!(plain.bars.close, vec![10.0, 20.0], "prices as written");
    assert_eq!(plain.notices.len(), 1);
    assert!(
        plain.notices[0].contains("Adj Close") && plain.notices[0].contains("data.adjust"),
        "{:?}",
        plain.notices
    );
    // adjust: factor adj/close = 0.5 on bar 0, 1 on bar 1, by hand.
    let adjusted = parse_csv_with(
        text.as_bytes(),
        &LoadOptions {
            adjust: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(adjusted.notices.is_empty());
    let b = adjusted.bars;
    assert_eq!(
        (b.open[0], b.high[0], b.low[0], b.close[0]),
        (5.0, 6.0, 4.0, 5.0)
    );
    assert_eq!(
        (b.open[1], b.high[1], b.low[1], b.close[1]),
        (20.0, 22.0, 18.0, 20.0)
    );
    // adjust without the column names what is missing.
    let e = parse_csv_with(
        GOOD.as_bytes(),
        &LoadOptions {
            adjust: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("data.adjust") && e.contains("Adj Close"), "{e}");
    // A bad adjusted close names its line.
    let bad = "date,open,high,low,close,adj_close\n2020-01-01,10,12,8,10,x\n";
    let e = parse_csv_with(
        bad.as_bytes(),
        &LoadOptions {
            adjust: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("line 2") && e.contains("adj_close"), "{e}");
}

/// The same bars written the ways users' files come: comma CSV (the
/// reference), semicolon CSV, a MetaTrader 5 tab export, a pandas CSV with
/// tz-aware times, and a header-less kline file named by `data.columns`.
#[test]
fn every_dialect_of_the_same_prices_gives_the_same_bars() {
    use sieve_core::data::synth;
    use sieve_core::format::time;
    let bars = synth(60, 4);
    // Hourly times, so the clock matters.
    let t0 = 1_704_067_200_000i64; // 2024-01-01T00:00:00Z
    let times: Vec<i64> = (0..bars.len() as i64).map(|i| t0 + i * 3_600_000).collect();
    let volume = bars.volume.clone().unwrap();
    let row = |i: usize, sep: &str| {
        [
            bars.open[i],
            bars.high[i],
            bars.low[i],
            bars.close[i],
            volume[i],
        ]
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(sep)
    };
    let hms = |ms: i64| {
        let s = (ms / 1000).rem_euclid(86_400);
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    };
    let (mut comma, mut semi, mut mt5, mut pandas, mut klines) = (
        String::from("time,open,high,low,close,volume\n"),
        String::from("Date;Open;High;Low;Close;Volume\n"),
        String::from(
            "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>\n",
        ),
        String::from(",open,high,low,close,volume\n"),
        String::new(),
    );
    for (i, &t) in times.iter().enumerate() {
        let day = time(t - t.rem_euclid(86_400_000));
        comma.push_str(&format!("{},{}\n", t, row(i, ",")));
        semi.push_str(&format!("{day} {};{}\n", hms(t), row(i, ";")));
        mt5.push_str(&format!(
            "{}\t{}\t{}\t0\t2\n",
            day.replace('-', "."),
            hms(t),
            row(i, "\t")
        ));
        // Written in New York time (UTC−5) with its offset.
        let local = t - 5 * 3_600_000;
        let local_day = time(local - local.rem_euclid(86_400_000));
        pandas.push_str(&format!(
            "{local_day} {}-05:00,{}\n",
            hms(local),
            row(i, ",")
        ));
        klines.push_str(&format!(
            "{t},{},{},{},{},{},{},0\n",
            bars.open[i],
            bars.high[i],
            bars.low[i],
            bars.close[i],
            volume[i],
            t + 3_599_999
        ));
    }
    let read = |text: &str, columns: Option<&[&str]>| {
        let options = LoadOptions {
            columns: columns.map(|c| c.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        let bars = parse_csv_with(text.as_bytes(), &options)
            .unwrap_or_else(|e| panic!("{e}\n{}", &text[..200.min(text.len())]))
            .bars;
        // The dialects' other columns (spread, close time) are not prices.
        Bars {
            extra: Vec::new(),
            ..bars
        }
    };
    let reference = read(&comma, None);
    assert_eq!(reference.time, times);
    assert_eq!(read(&semi, None), reference, "semicolon");
    assert_eq!(read(&mt5, None), reference, "MetaTrader 5 export");
    assert_eq!(read(&pandas, None), reference, "pandas tz-aware");
    let kline_columns = [
        "open_time",
        "open",
        "high",
        "low",
        "close",
        "volume",
        "close_time",
        "trades",
    ];
    assert_eq!(
        read(&klines, Some(&kline_columns)),
        reference,
        "header-less klines"
    );

    // A decimal comma stays a clear error, naming the line.
    let e = parse_csv_with(
        b"date;open;high;low;close\n2024-01-01;1,5;2;1;1,5\n",
        &LoadOptions::default(),
    )
    .unwrap_err();
    assert!(e.contains("line 2") && e.contains("decimal commas"), "{e}");
    // Too few names for a header-less file's rows is an error, not a panic.
    let e = parse_csv_with(
        b"1704067200000,1,2,1,1.5\n",
        &LoadOptions {
            columns: Some(
                ["time", "open", "high", "low", "close", "volume", "x"]
                    .map(String::from)
                    .to_vec(),
            ),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        e.contains("line 1") && e.contains("5 fields where the header has 7"),
        "{e}"
    );
    let e = parse_csv_with(
        b"1704067200000,1,2,1,1.5\n",
        &LoadOptions {
            columns: Some(["time", "open", "high", "low"].map(String::from).to_vec()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        e.starts_with("data.columns: missing column(s) close"),
        "{e}"
    );
}

/// Spaces (and other Unicode whitespace) around headers and fields are
/// trimmed as before, now by the loader instead of the csv reader (which
/// copied every record to trim it); a row of blank fields is still a bad
/// row, and a bad cell still quotes its trimmed text.
#[test]
fn whitespace_around_fields_is_trimmed() {
    let plain =
        "date,open,high,low,close,mine\n2020-01-01,10,11,9,10.5,1\n2020-01-02,10.5,12,10,11,2\n";
    let spaced = " date , open,high ,low,close,\u{a0}mine\n 2020-01-01 , 10,11 ,9,\t10.5,1\u{a0}\n2020-01-02,10.5, 12,10,11 , 2\n";
    let (a, b) = (
        parse_csv(plain.as_bytes()).unwrap(),
        parse_csv(spaced.as_bytes()).unwrap(),
    );
    assert_eq!(a, b);
    assert_eq!(b.extra[0].name, "mine");
    let e = err("date,open,high,low,close\n2020-01-01,10,11,9,10.5\n  ,  , , ,\n");
    assert!(e.contains("line 3: every field is empty"), "{e}");
    let e = err("date,open,high,low,close\n2020-01-01,10,11,9,  x1 \n");
    assert!(e.contains("line 2") && e.contains("\"x1\""), "{e}");
}

/// `n` daily bars, line 2 onwards, each line's close its line number, but
/// -1 on the lines of `bad`.
fn long_csv(n: usize, bad: &[usize]) -> Vec<u8> {
    let mut text = String::from("date,open,high,low,close\n");
    for i in 0..n {
        let line = i + 2;
        let day =
            chrono::NaiveDate::from_ymd_opt(1990, 1, 1).unwrap() + chrono::Days::new(i as u64);
        let close = if bad.contains(&line) {
            -1.0
        } else {
            line as f64
        };
        text.push_str(&format!("{day},{line},{line},{line},{close}\n"));
    }
    text.into_bytes()
}

#[test]
fn problems_across_the_reading_threads_batches_come_in_file_order() {
    // Records are read on another thread in batches of 4,096: problems in
    // the first, a middle and the last batch, and past the fifth one only
    // counted.
    let lines = [3, 4097, 4098, 8200, 9000, 9001, 10_001];
    let e = parse_csv(&long_csv(10_000, &lines)).unwrap_err();
    let listed: Vec<String> = lines[..5]
        .iter()
        .map(|l| format!("line {l}: column 'close': price \"-1\" is not positive"))
        .collect();
    assert_eq!(e, format!("{}; and 2 more problem(s)", listed.join("; ")));
    // A file without problems loads whole, in order.
    let bars = parse_csv(&long_csv(10_000, &[])).unwrap();
    let closes: Vec<f64> = (2..10_002).map(|l| l as f64).collect();
    assert_eq!(bars.close, closes);
}

#[test]
fn a_reading_error_after_bad_rows_is_the_error() {
    // Invalid UTF-8 on line 9,000 (read on the other thread), after a bad
    // price on line 5: the reading error is what the user sees, as before
    // the reading moved to its own thread.
    let mut text = long_csv(10_000, &[5]);
    let starts: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    // Line 9,000 starts after the 8,999th newline; its third byte.
    text[starts[8998] + 2] = 0xFF;
    let e = parse_csv(&text).unwrap_err();
    assert!(e.starts_with("line 9000: invalid UTF-8"), "{e}");
}
