//! The sidecar test vectors (`testdata/spec/sidecar/`, written by `make-sidecars.py`): gmon's
//! reader must reach the result, error class and offset `manifest.tsv` states for each file
//! (spec/runtime.md §5, "Rejections"), and find the main object it names.

use std::path::Path;

use gmon_format::read_sidecar;

#[test]
fn every_sidecar_vector_reads_as_the_manifest_says() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/spec/sidecar");
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).expect("manifest.tsv");
    let mut rows = 0;
    let mut classes = std::collections::BTreeSet::new();
    for line in manifest.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [file, result, offset, main, case] = cols[..] else {
            panic!("bad manifest row: {line}");
        };
        let bytes = std::fs::read(dir.join(file)).expect(file);
        match read_sidecar(&bytes) {
            Ok(s) => {
                assert_eq!(
                    result, "ok",
                    "{file} ({case}) reads, the manifest says {result}"
                );
                let first_main = s.objects.iter().position(|o| o.is_main());
                let want = (main != "-").then(|| main.parse::<usize>().unwrap());
                assert_eq!(first_main, want, "{file}: main object");
                let main_object = s.main_object().map(|o| o.path.as_str());
                assert_eq!(
                    main_object,
                    want.map(|i| s.objects[i].path.as_str()),
                    "{file}"
                );
            }
            Err(e) => {
                classes.insert(e.class());
                assert_eq!(e.class(), result, "{file} ({case}): {e}");
                let at = e.offset().map(|o| format!("{o:#x}"));
                assert_eq!(at.as_deref(), Some(offset), "{file} ({case}): {e}");
            }
        }
        rows += 1;
    }
    assert!(rows >= 25, "{rows} rows");
    // Every class the spec's rejection table names has a vector.
    for class in [
        "sidecar-bad-magic",
        "eof",
        "bad-version",
        "sidecar-duplicate-section",
        "bad-value",
        "not-utf8",
        "sidecar-trailing-bytes",
    ] {
        assert!(classes.contains(class), "no vector for {class}");
    }
}
