#!/usr/bin/env python3
"""Plots clconv's throughput against buffer size: docs/throughput.svg.

The data comes from the conversions bench's sweep mode (benches/conversions.rs), which times,
for a few conversions at source sizes from 1 KiB to 64 MiB, clconv's kernel on one thread, the
plain Rust loop (compiled for the default x86-64 target) and memcpy of the same bytes, in
interleaved rounds, and writes every series' medians to target/bench-sweep.csv.

Regenerate from a new measurement (from the repository's root):

    CLCONV_BENCH_SWEEP=1 cargo bench --bench conversions
    python3 scripts/plot_throughput.py target/bench-sweep.csv --note \
        "Intel Xeon, 2 vCPUs (a shared VM, busy with other jobs); clconv at commit b96af25"

That writes docs/throughput.svg and copies the CSV to docs/throughput.csv. To redraw from the
committed CSV without running the bench:

    python3 scripts/plot_throughput.py docs/throughput.csv --note \
        "Intel Xeon, 2 vCPUs (a shared VM, busy with other jobs); clconv at commit b96af25"

Standard library only: the SVG is written by hand. The y axis is GB/s of bytes read plus written
(memcpy moves as many bytes as the conversion: it copies half of them), on a log scale, so the
three series, which differ by up to 300x, share one readable axis.
"""

import argparse
import csv
import math
import shutil
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent

# Series in drawing order: (CSV name, legend label, colour, dash pattern).
SERIES = [
    ("memcpy", "memcpy of the same bytes", "#6e7781", "6 4"),
    ("rust-default", "plain Rust loop (default x86-64 target)", "#bc4c00", None),
    ("kernel", "clconv kernel (Kernel::run, one thread)", "#0969da", None),
]

WIDTH = 900
LEFT, RIGHT = 78, 24  # plot area margins
PANEL_HEIGHT = 200  # plot area of one panel
PANEL_TITLE = 48  # above a panel's plot area: its name and caption
PANEL_GAP = 42  # below a panel's plot area: tick labels and space
HEADER = 118  # title, subtitle, legend
FOOTER = 12  # the x axis title
FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"


def size_label(log2):
    return f"{1 << (log2 - 20)} MiB" if log2 >= 20 else f"{1 << (log2 - 10)} KiB"


def read(path):
    """{conversion: {series: [(log2 of source bytes, GB/s)]}} in the CSV's order, the bytes
    read and written per element of each conversion, the highest 1-minute load averages seen
    during the run, and the rounds per point."""
    data, per_element, loads, rounds = {}, {}, [], set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            conv = row["conversion"]
            log2 = round(math.log2(int(row["source_bytes"])))
            points = data.setdefault(conv, {}).setdefault(row["series"], [])
            points.append((log2, float(row["gb_per_s"])))
            elements = int(row["elements"])
            per_element[conv] = (
                int(row["source_bytes"]) // elements,
                (int(row["bytes_read_written"]) - int(row["source_bytes"])) // elements,
            )
            load = float(row["load_1min_max"])
            if not math.isnan(load):
                loads.append(load)
            rounds.add(row["rounds"])
    return data, per_element, loads, rounds


def speedups(path):
    """{(conversion, series): kernel speed-up at the largest size}."""
    best = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            k = (row["conversion"], row["series"])
            size = int(row["source_bytes"])
            if k not in best or size > best[k][0]:
                best[k] = (size, float(row["kernel_speedup"]))
    return {k: v[1] for k, v in best.items()}


def y_ticks(lo, hi):
    """1-2-5 ticks covering [lo, hi], and the axis range (the outer ticks)."""
    ticks = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            ticks.append(m * 10.0**e)
    below = max(t for t in ticks if t <= lo)
    above = min(t for t in ticks if t >= hi)
    return [t for t in ticks if below <= t <= above], below, above


def fmt_gbs(v):
    return f"{v:g}"


def svg(data, per_element, loads, rounds, ratios, note):
    sizes = sorted({x for conv in data.values() for pts in conv.values() for x, _ in pts})
    x_lo, x_hi = sizes[0], sizes[-1]
    values = [y for conv in data.values() for pts in conv.values() for _, y in pts]
    ticks, y_lo, y_hi = y_ticks(min(values), max(values))
    plot_w = WIDTH - LEFT - RIGHT
    panel_span = PANEL_TITLE + PANEL_HEIGHT + PANEL_GAP
    height = HEADER + len(data) * panel_span + FOOTER

    def x_of(log2):
        return LEFT + (log2 - x_lo) / (x_hi - x_lo) * plot_w

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" font-size="13" fill="#1f2328">',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="{WIDTH / 2}" y="30" text-anchor="middle" font-size="20" font-weight="600">'
        "clconv: conversion throughput against buffer size</text>",
    ]
    sub = (
        f"GB/s of bytes read + written (log scale); one thread; medians of "
        f"{'/'.join(sorted(rounds))} interleaved rounds"
    )
    if loads:
        sub += f"; load average up to {max(loads):.1f} during the run"
    out.append(
        f'<text x="{WIDTH / 2}" y="54" text-anchor="middle" fill="#57606a">{escape(sub)}</text>'
    )
    if note:
        out.append(
            f'<text x="{WIDTH / 2}" y="73" text-anchor="middle" fill="#57606a">'
            f"{escape(note)}</text>"
        )

    # The legend: one row, centred; kernel first.
    items = list(reversed(SERIES))
    widths = [40 + 7.2 * len(label) for _, label, _, _ in items]
    x = (WIDTH - sum(widths)) / 2
    for (_, label, colour, dash), w in zip(items, widths):
        y = 100
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{x:.1f}" y1="{y}" x2="{x + 26:.1f}" y2="{y}" stroke="{colour}" '
            f'stroke-width="2.5"{dash_attr}/>'
        )
        out.append(f'<circle cx="{x + 13:.1f}" cy="{y}" r="3" fill="{colour}"/>')
        out.append(f'<text x="{x + 32:.1f}" y="{y + 4.5}">{escape(label)}</text>')
        x += w

    for i, (conv, series) in enumerate(data.items()):
        top = HEADER + i * panel_span + PANEL_TITLE
        bottom = top + PANEL_HEIGHT

        def y_of(v):
            f = (math.log10(v) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo))
            return bottom - f * PANEL_HEIGHT

        src, dst = per_element[conv]
        out.append(
            f'<text x="{LEFT}" y="{top - 27}" font-family="{MONO}" font-size="14" '
            f'font-weight="600">{escape(conv)}</text>'
        )
        right = []
        for name, what in (("rust-default", "the Rust loop's"), ("memcpy", "memcpy's")):
            if (conv, name) in ratios:
                right.append(f"{ratios[(conv, name)]:.2f}\u00d7 {what}")
        caption = f"{src} B read + {dst} B written per element"
        if right:
            caption += f"; at {size_label(x_hi)} the kernel's throughput is " + ", ".join(right)
        out.append(
            f'<text x="{LEFT}" y="{top - 9}" fill="#57606a" '
            f'font-size="13">{escape(caption)}</text>'
        )
        out.append(
            f'<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{PANEL_HEIGHT}" '
            f'fill="#f6f8fa" stroke="#d0d7de"/>'
        )
        # Grid and labels.
        for t in ticks:
            y = y_of(t)
            decade = abs(math.log10(t) - round(math.log10(t))) < 1e-9
            out.append(
                f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" '
                f'stroke="{"#afb8c1" if decade else "#d8dee4"}" stroke-width="1"/>'
            )
            out.append(
                f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
                f"{fmt_gbs(t)}</text>"
            )
        for log2 in range(x_lo, x_hi + 1):
            x = x_of(log2)
            if (log2 - x_lo) % 2 == 0:
                out.append(
                    f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" '
                    f'stroke="#d8dee4" stroke-width="1"/>'
                )
                out.append(
                    f'<text x="{x:.1f}" y="{bottom + 17}" text-anchor="middle" '
                    f'font-size="12">{size_label(log2)}</text>'
                )
            out.append(
                f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" '
                f'stroke="#57606a" stroke-width="1"/>'
            )
        mid = (top + bottom) / 2
        out.append(
            f'<text x="20" y="{mid}" text-anchor="middle" font-size="12" fill="#57606a" '
            f'transform="rotate(-90 20 {mid})">GB/s</text>'
        )
        # The series.
        for name, _, colour, dash in SERIES:
            pts = sorted(series.get(name, []))
            if not pts:
                continue
            path = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in pts)
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2.5" '
                f'stroke-linejoin="round"{dash_attr}/>'
            )
            for x, y in pts:
                out.append(f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="3" fill="{colour}"/>')

    out.append(
        f'<text x="{LEFT + plot_w / 2}" y="{height - 10}" text-anchor="middle">'
        "source buffer size (bytes converted per call; log scale)</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "csv",
        nargs="?",
        default=ROOT / "target" / "bench-sweep.csv",
        type=Path,
        help="the sweep's CSV (default: target/bench-sweep.csv)",
    )
    parser.add_argument("--note", default="", help="a line under the title: the machine")
    parser.add_argument("--out", default=ROOT / "docs" / "throughput.svg", type=Path)
    args = parser.parse_args()

    data, per_element, loads, rounds = read(args.csv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg(data, per_element, loads, rounds, speedups(args.csv), args.note))
    copy = args.out.parent / "throughput.csv"
    if args.csv.resolve() != copy.resolve():
        shutil.copyfile(args.csv, copy)
        print(f"copied {args.csv} to {copy}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
