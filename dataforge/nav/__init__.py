"""Navigation: graphs of viewpoints, geodesic-distance oracles and VLN path metrics.

``graph`` (a weighted directed navigation graph and its shortest paths), ``connectivity``
(Matterport3D simulator connectivity files), ``oracle`` (one interface for geodesic distances:
a navigation graph, habitat-sim's pathfinder), ``pathfinder`` (the one wrapper of habitat-sim's
navmesh pathfinder and its off-mesh rule), ``dtw`` and ``metrics`` (nDTW, t-nDTW,
TL/NE/OS/SR/SPL).
"""

from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GeodesicOracle, GraphOracle

__all__ = ["GeodesicOracle", "GraphOracle", "NavGraph"]
