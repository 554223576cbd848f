"""The floors of twinrank, drawn from the code: every folder on its floor, the module count in it.

Reads ``twinrank._layout`` (the folders and floors tests/project/test_floors.py holds the imports to), so
the picture cannot drift from the code.
"""
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from twinrank import _layout

ROOT = Path(_layout.__file__).resolve().parents[1]
FOLDER_OF = {"reference": ROOT / "reference", "fast": ROOT / "fast", "testing": ROOT / "testing"}


def module_count(folder: str) -> int:
    """How many modules the folder ``folder`` (a name of ``_layout.FLOORS``) holds."""
    twin, _, sub = folder.partition(".")
    if twin in ("reference", "fast") and sub in ("<root>", "engine"):
        names = _layout.FOLDERS[twin][""]
        return 1 if sub == "engine" else len([n for n in names if n != "engine"])
    if twin in ("reference", "fast"):
        return len(_layout.FOLDERS[twin][sub])
    path = FOLDER_OF.get(folder, ROOT / "_twinrank" / folder.replace(".", "/"))
    if folder == "twinrank":
        return len(list((ROOT / "_twinrank").glob("*.py")))
    return len([p for p in path.rglob("*.py") if p.stem != "__init__"])


COLUMNS = {"reference": 0.0, "fast": 1.0}  # the twins side by side; the rest on the right
fig, ax = plt.subplots(figsize=(10, 6.4))
for floor, (title, folders) in enumerate(_layout.FLOORS):
    y = floor
    ax.text(-0.08, y, title, ha="right", va="center", fontsize=9, style="italic")
    slots = {"reference": [], "fast": [], "other": []}
    for folder in folders:
        twin = folder.split(".")[0]
        slots[twin if twin in COLUMNS else "other"].append(folder)
    for column, names in slots.items():
        x0 = COLUMNS.get(column, 2.0)
        width = 0.95 / max(len(names), 1)
        for i, folder in enumerate(names):
            x = x0 + i * width
            label = folder.split(".", 1)[1] if column in COLUMNS else (
                "twinrank (_layout)" if folder == "twinrank" else f"twinrank.{folder}")
            color = {"reference": "#dbe8f5", "fast": "#f7e2cf"}.get(column, "#e4e4e4")
            ax.add_patch(FancyBboxPatch((x + 0.01, y - 0.32), width - 0.02, 0.64,
                                        boxstyle="round,pad=0.01", fc=color, ec="#555555", lw=0.7))
            ax.text(x + width / 2, y + 0.08, label.replace("combination", "combi-\nnation"), ha="center",
                    va="center", fontsize=7.5 if width > 0.3 else 6)
            ax.text(x + width / 2, y - 0.17, f"{module_count(folder)}", ha="center", va="center",
                    fontsize=6.5, color="#555555")
for column, x in (("twinrank.reference", 0.475), ("twinrank.fast", 1.475), ("not twinned", 2.475)):
    ax.text(x, len(_layout.FLOORS) - 0.35, column, ha="center", va="bottom", fontsize=10, weight="bold")
ax.set_xlim(-0.6, 3.0)
ax.set_ylim(-0.6, len(_layout.FLOORS) + 0.1)
ax.axis("off")
ax.set_title("The floors: a folder imports its own floor and the floors below (number: modules in it)",
             fontsize=10)
fig.tight_layout()
