use clconv::jit::{Jit, Threads, Tiering};
use std::time::Instant;
// NAME SB DB MIB STREAMS CHUNK_ELEMS ROUNDS -> paired ratio vs memcpy for one call and for S streams
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (sb, db): (usize, usize) = (a[2].parse().unwrap(), a[3].parse().unwrap());
    let mib: usize = a[4].parse().unwrap();
    let streams: usize = a[5].parse().unwrap();
    let chunk: usize = a[6].parse().unwrap();
    let rounds: usize = a[7].parse().unwrap();
    let jit = Jit::new().unwrap();
    jit.set_tiering(Tiering::OptimisedOnly);
    jit.set_threads(Threads::Exactly(1));
    let k = jit.compile(&a[1]).unwrap();
    let n = (mib << 20) / sb;
    let src: Vec<u8> = (0..n * sb)
        .map(|i| ((i as u64).wrapping_mul(0x9E3779B97F4A7C15) >> 56) as u8)
        .collect();
    let mut dst = vec![0u8; n * db];
    let half = n * (sb + db) / 2;
    let csrc = vec![1u8; half];
    let mut cdst = vec![0u8; half];
    let per = n / streams;
    let (mut r1, mut rs) = (vec![], vec![]);
    for _ in 0..rounds {
        let s = Instant::now();
        k.run_bytes(clconv::Layout::Packed, &src, &mut dst).unwrap();
        let t1 = s.elapsed().as_secs_f64();
        let s = Instant::now();
        let mut off = 0;
        while off < per {
            let len = chunk.min(per - off);
            for st in 0..streams {
                let e = st * per + off;
                k.run_bytes(
                    clconv::Layout::Packed,
                    &src[e * sb..(e + len) * sb],
                    &mut dst[e * db..(e + len) * db],
                )
                .unwrap();
            }
            off += len;
        }
        let ts = s.elapsed().as_secs_f64();
        let s = Instant::now();
        std::hint::black_box(&mut cdst[..]).copy_from_slice(std::hint::black_box(&csrc[..]));
        let tm = s.elapsed().as_secs_f64();
        r1.push(tm / t1);
        rs.push(tm / ts);
    }
    r1.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = rounds / 2;
    println!(
        "{}: one call x memcpy {:.2}  {streams} streams chunk {chunk}: {:.2}",
        a[1], r1[m], rs[m]
    );
}
