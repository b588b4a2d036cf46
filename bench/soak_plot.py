#!/usr/bin/env python3
"""Draws bench/soak.sh's samples (its CSV, the first argument) as one SVG on standard
output: three panels over the minutes of the run, each with its own scale from 0:
resident memory (all, its anonymous part, and what the allocator holds and has in use when
sampled); read and write latency (p50, p99); database size, WAL size and open
files. Standard library only."""

import csv
import sys

PANELS = [
    (
        "Resident memory (MB)",
        [
            ("rss_mb", "#1d4ed8", "resident"),
            ("anon_mb", "#64748b", "anonymous"),
            ("heap_held_mb", "#ea580c", "allocator holds"),
            ("heap_used_mb", "#16a34a", "in use"),
        ],
    ),
    (
        "Latency (ms)",
        [
            ("read_p50_ms", "#16a34a", "read p50"),
            ("read_p99_ms", "#b91c1c", "read p99"),
            ("write_p99_ms", "#9333ea", "write p99"),
        ],
    ),
    (
        "Database (MB) and open files",
        [
            ("db_mb", "#0f766e", "database MB"),
            ("wal_mb", "#ca8a04", "WAL MB"),
            ("open_files", "#475569", "open files"),
        ],
    ),
]
W, PANEL_H, LEFT, RIGHT, TOP, GAP = 720, 170, 60, 150, 30, 50


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    minutes = [number(r["minute"]) for r in rows]
    last = max(minutes) if minutes else 1
    height = TOP + len(PANELS) * (PANEL_H + GAP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
        f'viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{W}" height="{height}" fill="white"/>',
    ]
    plot_w = W - LEFT - RIGHT
    for p, (title, series) in enumerate(PANELS):
        y0 = TOP + p * (PANEL_H + GAP)
        values = [number(r.get(k)) for k, _, _ in series for r in rows]
        top = max([v for v in values if v is not None] + [1]) * 1.1
        out.append(f'<text x="{LEFT}" y="{y0 - 8}" font-weight="bold">{title}</text>')
        out.append(
            f'<rect x="{LEFT}" y="{y0}" width="{plot_w}" height="{PANEL_H}" '
            'fill="none" stroke="#cbd5e1"/>'
        )
        for frac in (0, 0.5, 1):
            y = y0 + PANEL_H - frac * PANEL_H
            out.append(f'<text x="{LEFT - 6}" y="{y + 4}" text-anchor="end">{top * frac:.0f}</text>')
        for m in range(0, int(last) + 1, max(1, int(last) // 6)):
            x = LEFT + plot_w * m / last
            out.append(
                f'<text x="{x:.1f}" y="{y0 + PANEL_H + 14}" text-anchor="middle">{m} min</text>'
            )
        for i, (key, colour, label) in enumerate(series):
            points = [
                f"{LEFT + plot_w * mi / last:.1f},{y0 + PANEL_H - PANEL_H * v / top:.1f}"
                for mi, v in ((minutes[j], number(r.get(key))) for j, r in enumerate(rows))
                if v is not None
            ]
            out.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                f'points="{" ".join(points)}"/>'
            )
            ly = y0 + 14 + i * 16
            out.append(
                f'<line x1="{W - RIGHT + 10}" y1="{ly - 4}" x2="{W - RIGHT + 28}" y2="{ly - 4}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
            out.append(f'<text x="{W - RIGHT + 32}" y="{ly}">{label}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
