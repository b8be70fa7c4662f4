"""How long redaction takes on hostile text at two sizes: a doubling should about double it.

Usage: python benchmarks/redaction.py [--size 200000]

Registers an Anthropic-shaped key and the GitHub token's shape, then times :func:`redact` (the
best of three) on text of ``--size`` characters and of twice that, for each shape: plain prose,
JSON escapes everywhere, a run of blanks between prefixes of the key, its base64 wrapped by
escaped line breaks, and escapes nested four deep.
"""

from __future__ import annotations

import argparse
import base64
import time

from ragaliq.redaction import redact, register_secret

KEY = "sk-ant-api03-Bench_Mark-0123456789abcdefXYZ"
TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"


def shapes(size: int) -> dict[str, str]:
    encoded = base64.b64encode(KEY.encode()).decode()
    wrapped = "\\n".join(encoded[i : i + 19] for i in range(0, len(encoded), 19))
    return {
        "prose": ("The refund window is 60 days. " * size)[:size],
        "escapes": ('\\u0041\\n\\t\\"' * size)[:size],
        "blanks between key prefixes": ((KEY[:20] + " \\n" * 50) * size)[:size],
        "wrapped base64": ((wrapped + " ") * size)[:size],
        "nested escapes": ("\\\\\\\\n" + KEY[:10] * 2) * (size // 25),
    }


def best(text: str) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200_000)
    args = parser.parse_args()
    register_secret(KEY)
    register_secret(TOKEN)
    small, large = shapes(args.size), shapes(2 * args.size)
    print(f"{'shape':<30} {args.size:>10,} chars {2 * args.size:>10,} chars  ratio")
    for name in small:
        a, b = best(small[name]), best(large[name])
        print(f"{name:<30} {a:>14.3f} s {b:>14.3f} s  {b / a:5.2f}")


if __name__ == "__main__":
    main()
