"""Engine layering: the allowed include edges, read from the CMake targets.

engine/CMakeLists.txt declares each engine folder's library with
`onyx_engine_layer(NAME SEES folder... ...)`; SEES is what the layer may
include. This module parses those declarations so that the checks in this
folder and engine/README.md's arrows have one source of truth.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"

# What a provider (providers/*) may include: the framework layer and what its
# headers need, plus its own folder.
PROVIDER_SEES = ("common", "graph", "framework", "providers")


def engine_layers(cmake_text=None):
    """{layer: [folders it may include]} in declaration order (bottom first)."""
    if cmake_text is None:
        cmake_text = (ENGINE / "CMakeLists.txt").read_text()
    cmake_text = re.sub(r"#[^\n]*", "", cmake_text)  # comments
    layers = {}
    for match in re.finditer(r"onyx_engine_layer\((\w+)(.*?)\)", cmake_text, re.S):
        name, body = match.group(1), match.group(2)
        words = body.split()
        sees = []
        if "SEES" in words:
            for word in words[words.index("SEES") + 1:]:
                if word in ("LINKS", "SOURCES"):
                    break
                sees.append(word)
        layers[name] = sees
    if not layers:
        raise SystemExit("no onyx_engine_layer(...) declarations found in engine/CMakeLists.txt")
    return layers


def direct_arrows(layers):
    """{layer: [layers it depends on directly]}: SEES minus what those already see."""
    arrows = {}
    for name, sees in layers.items():
        below = [f for f in sees if f != name]
        indirect = set()
        for f in below:
            indirect.update(x for x in layers.get(f, []) if x != f)
        arrows[name] = [f for f in below if f not in indirect]
    return arrows


def readme_block(layers):
    """The arrows as engine/README.md shows them (between the layer markers)."""
    lines = ["```"]
    for name, targets in reversed(list(direct_arrows(layers).items())):
        lines.append(f"{name:<10} -> {', '.join(targets) if targets else '(nothing)'}")
    lines.append(f"{'providers':<10} -> {', '.join(f for f in PROVIDER_SEES if f != 'providers')}")
    lines.append("```")
    return "\n".join(lines)


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def includes(path):
    return INCLUDE.findall(path.read_text(errors="replace"))
