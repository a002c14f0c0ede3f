//! The progress events `clconv check --exhaustive` draws its terminal bar from
//! (`clconv_verify::exhaustive::run_with_progress`): one start with the whole job, a label per
//! group, and advances that add up to the job.

use clconv_verify::exhaustive::{self, Options, ProgressEvent};
use std::sync::Mutex;

#[test]
fn advances_add_up_to_the_announced_total() {
    let options = Options {
        filter: "convert_short_sat_rt*(float)".into(),
        inputs: Some(3_000_000),
        ..Options::default()
    };
    let events = Mutex::new((Vec::new(), Vec::new(), 0u64));
    let mut lines = Vec::new();
    let summary = exhaustive::run_with_progress(
        &options,
        &mut |r| {
            lines.push(r.to_string());
            Ok(())
        },
        &|e| {
            let mut ev = events.lock().unwrap();
            match e {
                ProgressEvent::Start { total } => ev.0.push(total),
                ProgressEvent::Group(label) => ev.1.push(label.to_string()),
                ProgressEvent::Advance(n) => ev.2 += n,
            }
        },
    )
    .unwrap();
    let (starts, groups, advanced) = events.into_inner().unwrap();
    assert_eq!(summary.failed, 0, "{lines:?}");
    assert_eq!(summary.passed, 4, "{lines:?}");
    assert_eq!(starts.len(), 1);
    assert!(starts[0] > 0);
    assert_eq!(advanced, starts[0], "the advances add up to the total");
    assert_eq!(groups.len(), 4, "{groups:?}");
    assert!(
        groups[0].starts_with("group 1/4 convert_short_sat_rt"),
        "{groups:?}"
    );
}
