//! Many threads on one `Jit`, and memory: several threads compile and run kernels at once (the
//! same requests and different ones), every result checked against the reference; compiling
//! the same requests again and again does not grow the cache or the process; dropping a `Jit`
//! unmaps its machine code.
//!
//! Memory is read from `/proc/self` (Linux): the resident set from `statm`, and the JIT's code
//! as the anonymous executable mappings of `maps`. The tests that measure take one lock, so no
//! other test of this file compiles while they count. No assertion depends on time.

use clconv::jit::{Jit, Threads, X64Flags};
use clconv::{buffer, reference, Extensions, Layout, Request, Rounding, Width};
use clconv_verify::check::Rng;
use std::sync::{Mutex, MutexGuard};

/// Held by every test: measurements must not see another test's compilations.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // The previous test's JITs may still be held by the background compiler for a moment.
    clconv::jit::wait_for_background_compiles();
    guard
}

fn ext() -> Extensions {
    Extensions::with_fp16()
}

fn jit() -> Jit {
    Jit::with_options(X64Flags::Host, ext(), Rounding::Rte).unwrap()
}

/// A spread of requests: every class, widths 1 to 16, half, 3-component vectors.
fn requests() -> Vec<Request> {
    let all = Request::all(ext());
    // Every 97th request (a prime stride walks through types, widths and modifiers).
    all.iter().step_by(97).copied().collect()
}

/// Runs `request` on random bytes in `layout` and compares with the reference; guard bytes
/// after the destination must stay as they were.
fn run_and_check(jit: &Jit, request: &Request, layout: Layout, vectors: usize, rng: &mut Rng) {
    let kernel = jit.compile_request(request).unwrap();
    let src_len = vectors * buffer::bytes_per_vector(request.src(), layout);
    let dst_len = vectors * buffer::bytes_per_vector(request.dst(), layout);
    let src: Vec<u8> = (0..src_len).map(|_| rng.next_u64() as u8).collect();
    let mut want = vec![0u8; dst_len];
    reference::evaluate(request, layout, &src, &mut want).unwrap();
    let mut got = vec![0xa5u8; dst_len + 64];
    kernel
        .run_bytes(layout, &src, &mut got[..dst_len])
        .unwrap_or_else(|e| panic!("{request}: {e}"));
    assert!(
        got[..dst_len] == want[..],
        "{request} {layout:?}: wrong bytes"
    );
    assert!(
        got[dst_len..].iter().all(|&b| b == 0xa5),
        "{request}: wrote past the destination"
    );
}

fn layouts(r: &Request) -> &'static [Layout] {
    if r.src().width == Width::W3 || r.dst().width == Width::W3 {
        &[Layout::Packed, Layout::Aligned]
    } else {
        &[Layout::Packed]
    }
}

/// The kernel the JIT documents running `r` on (`Jit::cached_kernels`): in the packed layout
/// a conversion of any width shares the scalar conversion's kernel (the name without its width
/// digits); reinterpretations, and 3-component vectors in the aligned layout, have their own.
fn kernel_of(r: &Request, layout: Layout) -> (String, Layout) {
    let x3 = r.src().width == Width::W3 || r.dst().width == Width::W3;
    match r {
        Request::Convert(c) if !(x3 && layout == Layout::Aligned) => {
            (c.with_width(Width::W1).to_string(), Layout::Packed)
        }
        _ if x3 => (r.to_string(), layout),
        _ => (r.to_string(), Layout::Packed),
    }
}

#[test]
fn threads_compile_and_run_the_same_and_different_requests() {
    let _serial = serial();
    let jit = jit();
    let requests = requests();
    let threads = 8;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (jit, requests) = (&jit, &requests);
            s.spawn(move || {
                let mut rng = Rng::new(t as u64);
                // Every thread: all shared requests, starting at a different place (so first
                // compilations race), and its own slice of the matrix nobody else touches.
                for k in 0..requests.len() {
                    let r = &requests[(k + t * 7) % requests.len()];
                    for &layout in layouts(r) {
                        run_and_check(jit, r, layout, 1 + k % 37, &mut rng);
                    }
                }
                let own: Vec<Request> = Request::all(ext())
                    .into_iter()
                    .skip(1 + t)
                    .step_by(89 * threads)
                    .collect();
                for r in &own {
                    run_and_check(jit, r, Layout::Packed, 5, &mut rng);
                }
            });
        }
    });
    // Each kernel was compiled exactly once, whichever thread got there first.
    let mut distinct = std::collections::HashSet::new();
    for r in requests.iter() {
        for &l in layouts(r) {
            distinct.insert(kernel_of(r, l));
        }
    }
    for t in 0..threads {
        for r in Request::all(ext())
            .into_iter()
            .skip(1 + t)
            .step_by(89 * threads)
        {
            distinct.insert(kernel_of(&r, Layout::Packed));
        }
    }
    assert_eq!(jit.cached_kernels(), distinct.len());
}

#[test]
fn runs_split_across_threads_while_other_threads_compile() {
    let _serial = serial();
    let jit = jit();
    jit.set_threads(Threads::Exactly(3));
    let busy = Request::parse("convert_uchar16_sat_rte(float16)", ext()).unwrap();
    std::thread::scope(|s| {
        let jit = &jit;
        s.spawn(move || {
            let mut rng = Rng::new(99);
            for _ in 0..20 {
                run_and_check(jit, &busy, Layout::Packed, 20_000, &mut rng);
            }
        });
        for t in 0..3 {
            s.spawn(move || {
                let mut rng = Rng::new(t);
                for r in Request::all(ext()).iter().skip(t as usize).step_by(301) {
                    for &layout in layouts(r) {
                        run_and_check(jit, r, layout, 9, &mut rng);
                    }
                }
            });
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

/// Resident set size in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// Bytes of anonymous executable mappings: where the JIT puts machine code (src/code_memory.rs).
fn jit_code_bytes() -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // address perms offset dev inode [path]
            let anonymous = fields.len() < 6;
            if fields[1].starts_with("r-x") && anonymous {
                let (lo, hi) = fields[0].split_once('-')?;
                let lo = usize::from_str_radix(lo, 16).ok()?;
                let hi = usize::from_str_radix(hi, 16).ok()?;
                Some(hi - lo)
            } else {
                None
            }
        })
        .sum()
}

const MB: usize = 1 << 20;

#[test]
fn compiling_the_same_requests_again_and_again_stays_bounded() {
    let _serial = serial();
    let jit = jit();
    let requests = requests();
    for r in &requests {
        jit.compile_request(r).unwrap();
    }
    // Tiered: the optimised kernels arrive from the background thread; count code after them.
    jit.finish_tier_up();
    let kernels = jit.cached_kernels();
    let distinct: std::collections::HashSet<_> = requests
        .iter()
        .map(|r| kernel_of(r, Layout::Packed))
        .collect();
    assert_eq!(kernels, distinct.len());
    let (rss_before, code_before) = (rss(), jit_code_bytes());
    // 40,000 more compilations of the same requests, from four threads at once. Without the
    // cache each would map at least one more page of code: 160 MB and more.
    std::thread::scope(|s| {
        for t in 0..4 {
            let (jit, requests) = (&jit, &requests);
            s.spawn(move || {
                for k in 0..10_000 {
                    let r = &requests[(k * 7 + t) % requests.len()];
                    let kernel = jit.compile_request(r).unwrap();
                    assert_eq!(kernel.request(), Some(*r));
                }
                // And by name, through the parser, for the first few.
                for r in requests.iter().take(20) {
                    jit.compile(&r.to_string()).unwrap();
                    jit.compile(&r.mangled()).unwrap();
                }
            });
        }
    });
    assert_eq!(jit.cached_kernels(), kernels, "the cache grew");
    assert_eq!(jit_code_bytes(), code_before, "new code was mapped");
    let grown = rss().saturating_sub(rss_before);
    assert!(grown < 4 * MB, "resident set grew by {grown} bytes");
}

#[test]
fn dropping_the_jit_unmaps_its_code() {
    let _serial = serial();
    let baseline = jit_code_bytes();
    let jit = jit();
    let mut kept = Vec::new();
    for r in requests().iter().take(30) {
        kept.push(jit.compile_request(r).unwrap());
    }
    // Both tiers' code, before the last handle goes (a queued background compile holds the
    // JIT until it ends).
    jit.finish_tier_up();
    let with_code = jit_code_bytes();
    assert!(
        with_code >= baseline + 30 * 4096,
        "30 kernels should map at least 30 pages of code: {baseline} -> {with_code}"
    );
    // The kernels keep the code alive after the Jit handle is gone...
    drop(jit);
    assert_eq!(jit_code_bytes(), with_code);
    let r = kept[0].request().unwrap();
    let mut rng = Rng::new(5);
    let src: Vec<u8> = (0..buffer::bytes_per_vector(r.src(), Layout::Packed))
        .map(|_| rng.next_u64() as u8)
        .collect();
    let mut dst = vec![0u8; buffer::bytes_per_vector(r.dst(), Layout::Packed)];
    kept[0].run_bytes(Layout::Packed, &src, &mut dst).unwrap();
    // ...and the last of them frees it.
    drop(kept);
    assert_eq!(
        jit_code_bytes(),
        baseline,
        "code still mapped after the last drop"
    );
}

#[test]
fn many_jits_created_and_dropped_stay_bounded() {
    let _serial = serial();
    let requests = requests();
    let round = |k: usize| {
        let jit = jit();
        let mut rng = Rng::new(k as u64);
        for r in requests.iter().skip(k % 10).step_by(10).take(5) {
            run_and_check(&jit, r, Layout::Packed, 3, &mut rng);
        }
        let distinct: std::collections::HashSet<_> = requests
            .iter()
            .skip(k % 10)
            .step_by(10)
            .take(5)
            .map(|r| kernel_of(r, Layout::Packed))
            .collect();
        assert_eq!(jit.cached_kernels(), distinct.len());
        jit.finish_tier_up();
    };
    // Warm up allocator pools and lazily initialised statics.
    for k in 0..20 {
        round(k);
    }
    let (rss_before, code_before) = (rss(), jit_code_bytes());
    // 300 JITs of 5 kernels: 1,500 kernels. Leaking them (mem::forget) maps 6 MB more code and
    // grows the resident set by ~8 MB here; freeing them, it grows by a few pages.
    for k in 0..300 {
        round(k);
        assert_eq!(jit_code_bytes(), code_before, "JIT {k} left code mapped");
    }
    let grown = rss().saturating_sub(rss_before);
    assert!(grown < 4 * MB, "resident set grew by {grown} bytes");
}
