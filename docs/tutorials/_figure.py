"""Included by the docs' figure blocks: print the current matplotlib figure as inline SVG.

A page shows a tutorial's figure with a block that runs this file after the
tutorial section that drew it (markdown-exec, ``html="true"``).
"""
import io
import matplotlib.pyplot as plt

_svg = io.StringIO()
plt.gcf().savefig(_svg, format="svg", metadata={"Date": None})
plt.close(plt.gcf())
print('<div class="twinrank-figure">' + _svg.getvalue()[_svg.getvalue().index("<svg"):] + "</div>")
