"""Print the current matplotlib figure as inline SVG (the docs' figure blocks).

A page shows a tutorial's figure with a block that runs this file after the
tutorial section that drew it (markdown-exec, ``html="true"``).
"""
import io

import matplotlib.pyplot as plt

_svg = io.StringIO()
plt.gcf().savefig(_svg, format="svg", metadata={"Date": None})
plt.close(plt.gcf())
_text = _svg.getvalue()
print('<div class="twinrank-figure">' + _text[_text.index("<svg"):] + "</div>")
