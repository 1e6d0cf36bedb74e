"""``python -m bayesrank.datasets``: the short names every subcommand accepts as DATA, and every
bundled file (test fixtures only in a source checkout)."""

from __future__ import annotations

from bayesrank.datasets import ALIASES, SHIPPED, TEST_ONLY, available, roots


def main() -> None:
    print("short names (usable as DATA by every subcommand):")
    for name, rel in ALIASES.items():
        folder = rel.split("/")[0]
        where = f"shipped, {SHIPPED[folder]}" if folder in SHIPPED else f"test fixture, {TEST_ONLY[folder]}"
        found = any((root / rel).exists() for root in roots())
        print(f"  {name:<18} {rel:<62} {where}{'' if found else ' (not available here)'}")
    print("\nbundled files (relative names also work as DATA):")
    for name in available():
        print(f"  {name}")


if __name__ == "__main__":
    main()
