"""Write `band_levels.json`: the bands' calibrated levels on a grid of sample sizes.

Run `python -m dpaudit.audit.estimators.band_table` after changing the band's
design (checkpoints, weights): the table is keyed by the design's
fingerprint and ignored when it does not match. It only saves time: every
level taken from it is checked exactly at the sample size in use.
"""

from __future__ import annotations

import json

import numpy as np
from dpaudit.audit.estimators.bands import LEVELS_FILE, calibrate_from_scratch, design_fingerprint

__all__ = ["main"]

BETAS = (0.025, 0.005, 0.05, 0.0125)
"""β per band of the usual confidences 0.95, 0.99 and 0.9 (each class gets β/2), and of the
two-dataset bands interval at 0.95 (β/4: two classes, two directions)."""
SIZES = np.unique(np.round(np.geomspace(100, 2_000_000, 110)).astype(int))


def main() -> None:
    """Calibrate every (size, β) of the grid the table lacks from scratch and write the table.

    Rows of a table written for the same design are kept: adding a β costs only its own rows.
    """
    kept = json.loads(LEVELS_FILE.read_text()) if LEVELS_FILE.is_file() else {}
    levels = kept.get("levels", {}) if kept.get("design") == design_fingerprint() else {}
    for beta in BETAS:
        if len(levels.get(repr(beta), [])) != SIZES.size:
            levels[repr(beta)] = [[int(n), calibrate_from_scratch(int(n), beta)] for n in SIZES]
    LEVELS_FILE.write_text(json.dumps({"design": design_fingerprint(), "levels": levels}, indent=0))
    print(f"wrote {LEVELS_FILE} ({SIZES.size} sizes × {len(levels)} levels)")


if __name__ == "__main__":
    main()
