"""What ``dataforge houses show`` calls (no click in here): draw a house, optionally write its
world graph."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dataforge.errors import DataforgeError, UsageError
from dataforge.outputs import check_output_file


def show(
    house_file: Path,
    out: Path,
    *,
    views: int = 4,
    graph_out: Path | None = None,
    sim: str = "embedded",
    assets: Path | None = None,
) -> str:
    """Write the picture (and optionally the world graph); return a one-line summary.

    ``out`` and ``graph_out`` are checked before the house is loaded, as ``inspect --preview``
    checks its file: a folder that does not exist is an error (it is not created), as is a
    directory or a place that cannot be written.
    """
    out = Path(out)
    check_image_suffix(out, "--out")
    check_output_file(out, "--out", inputs=[house_file, assets])
    if graph_out is not None:
        graph_out = Path(graph_out)
        if os.path.abspath(graph_out) == os.path.abspath(out):
            raise UsageError(f"--graph and --out name the same file ({out})")
        check_output_file(graph_out, "--graph", inputs=[house_file, assets])

    from dataforge.world.assets import load_catalogue
    from dataforge.world.graph import world_graph
    from dataforge.world.house import load_house
    from dataforge.world.mesh_assets import MeshLibrary
    from dataforge.world.navigation import house_nav_grid
    from dataforge.world.show import show_house

    library = MeshLibrary.from_option(assets)
    catalogue = load_catalogue()
    house = load_house(house_file, catalogue=catalogue)
    reachable = house_nav_grid(house, catalogue).reachable_positions()
    try:
        show_house(
            house, catalogue, out, views=views, reachable=reachable, sim=sim, library=library
        )
    except OSError as exc:
        raise DataforgeError(f"cannot write {out}: {exc.strerror or exc}") from None
    text = f"{house.name}: {len(house.rooms)} rooms, {len(house.objects)} objects; map in {out}"
    if library is not None:
        text += f"; {library.report()}"
    if graph_out is not None:
        graph = world_graph(house, catalogue)
        try:
            graph_out.write_text(json.dumps(graph.to_dict(), indent=1) + "\n")
        except OSError as exc:
            raise DataforgeError(f"cannot write {graph_out}: {exc.strerror or exc}") from None
        text += f"; world graph in {graph_out}"
    return text


def check_image_suffix(path: Path, option: str) -> None:
    """The picture's format follows its file name (matplotlib's rule): refuse, before any work,
    a suffix matplotlib cannot write (no suffix writes PNG)."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix[1:].lower()
    if suffix and suffix not in formats:
        raise UsageError(
            f"{option} {path}: cannot write a .{suffix} image; use .png (or one of "
            f"{', '.join(sorted(formats))})"
        )


def assets(
    out: Path,
    *,
    types: tuple[str, ...] = (),
    json_out: Path | None = None,
    assets_dir: Path | None = None,
    boxes: bool = False,
) -> str:
    """Write the contact sheet of asset shapes (and optionally their JSON); return a summary."""
    out = Path(out)
    check_output_file(out, "--out", inputs=[assets_dir])
    if out.suffix.lower() not in (".png", ""):
        raise UsageError(f"--out {out}: the gallery is written as PNG; name it .png")
    if json_out is not None:
        check_output_file(Path(json_out), "--json", inputs=[assets_dir])

    from PIL import Image

    from dataforge.world.assets import load_catalogue
    from dataforge.world.gallery import gallery_records, render_gallery
    from dataforge.world.mesh_assets import MeshLibrary

    library = MeshLibrary.from_option(assets_dir)
    catalogue = load_catalogue()
    entries = gallery_records(catalogue, types or None, library)
    sheet = render_gallery(entries, boxes=boxes, library=library)
    try:
        Image.fromarray(sheet).save(out, format="PNG")
        if json_out is not None:
            records = {e.object_type: e.record for e in entries}
            Path(json_out).write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        raise DataforgeError(f"cannot write: {exc.strerror or exc}") from None
    text = f"{len(entries)} object types drawn in {out}"
    if json_out is not None:
        text += f"; shapes and surfaces in {json_out}"
    if library is not None:
        text += f"; {library.report()}"
    return text
