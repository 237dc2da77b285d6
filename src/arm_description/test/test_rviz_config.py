# Copyright 2026 arm_ik maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The RViz2 configs: frame, displays, relative topics, tools and a view that fits the arm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

RVIZ_DIR = Path(__file__).resolve().parents[1] / 'rviz'

# Arm reach and standing height (m) from the specification, for the view check.
REACH_AND_HEIGHT: dict[str, tuple[float, float]] = {
    'pointer3': (0.95 + 0.85, 0.405 + 0.95 + 0.85),
    'ccd5': (1.30, 1.30),
    'six_axis': (0.95 + 0.85 + 0.22 + 0.30, 0.40 + 0.95 + 0.85 + 0.22 + 0.30),
    'manipulator3d': (0.60 + 0.50, 0.60 + 0.50),
}


@pytest.fixture
def rviz(arm: str) -> dict[str, Any]:
    return yaml.safe_load((RVIZ_DIR / f'{arm}.rviz').read_text())


def by_class(items: list[dict[str, Any]], cls: str) -> dict[str, Any]:
    (found,) = [item for item in items if item['Class'] == cls]
    return found


def by_name(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [item for item in items if item['Name'] == name]
    return found


# What the markers node (arm_ik) draws, one namespace per kind; all on by default.
MARKER_NAMESPACES = {'floor', 'reach_circles', 'reach_shell', 'target', 'tip_path',
                     'path_failure', 'ghosts', 'contacts', 'link_capsules', 'readout'}


def topics(node: Any) -> list[str]:
    """Every topic name in the config (values under a 'Topic' or 'Description Topic' key)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ('Topic', 'Description Topic') and isinstance(value, dict):
                found.append(value['Value'])
            else:
                found += topics(value)
    elif isinstance(node, list):
        for item in node:
            found += topics(item)
    return found


def test_fixed_frame_is_base_link(rviz: dict[str, Any]) -> None:
    assert rviz['Visualization Manager']['Global Options']['Fixed Frame'] == 'base_link'


def test_displays_and_relative_topics(rviz: dict[str, Any]) -> None:
    displays = rviz['Visualization Manager']['Displays']
    by_class(displays, 'rviz_default_plugins/Grid')
    by_class(displays, 'rviz_default_plugins/TF')
    model = by_class(displays, 'rviz_default_plugins/RobotModel')
    assert model['Description Source'] == 'Topic'
    assert model['Description Topic']['Value'] == 'robot_description'
    assert model['Description Topic']['Durability Policy'] == 'Transient Local'
    all_topics = topics(rviz)
    assert all_topics and not [t for t in all_topics if t.startswith('/')], all_topics


def test_marker_displays_and_namespaces(rviz: dict[str, Any]) -> None:
    displays = rviz['Visualization Manager']['Displays']
    markers = by_name(displays, 'Markers')
    assert markers['Class'] == 'rviz_default_plugins/MarkerArray'
    assert markers['Topic']['Value'] == 'markers'
    # Latched scene: an RViz started after the nodes still gets it.
    assert markers['Topic']['Durability Policy'] == 'Transient Local'
    assert markers['Namespaces'] == {ns: True for ns in MARKER_NAMESPACES}
    safety = by_name(displays, 'Safety')
    assert safety['Class'] == 'rviz_default_plugins/MarkerArray'
    assert safety['Topic']['Value'] == 'safety_markers'
    # The obstacle comes from the safety monitor; what Markers also draws is off here.
    assert safety['Namespaces'] == {'obstacle': True, 'floor': False, 'link_capsules': False,
                                    'contacts': False}
    ball = by_name(displays, 'Ball')
    assert ball['Class'] == 'rviz_default_plugins/Marker'
    assert ball['Topic']['Value'] == 'ball_marker'
    assert ball['Topic']['Durability Policy'] == 'Transient Local'
    assert all(d['Enabled'] for d in (markers, safety, ball))


def test_point_and_goal_tools(rviz: dict[str, Any]) -> None:
    tools = rviz['Visualization Manager']['Tools']
    assert by_class(tools, 'rviz_default_plugins/PublishPoint')['Topic']['Value'] == (
        'clicked_point'
    )
    assert by_class(tools, 'rviz_default_plugins/SetGoal')['Topic']['Value'] == 'goal_pose'


def test_orbit_view_frames_the_arm(arm: str, rviz: dict[str, Any]) -> None:
    view = rviz['Visualization Manager']['Views']['Current']
    reach, height = REACH_AND_HEIGHT[arm]
    assert view['Class'] == 'rviz_default_plugins/Orbit'
    assert view['Distance'] == pytest.approx(2.0 * reach, rel=0.1)
    assert view['Focal Point']['Z'] == pytest.approx(height / 2.0, rel=0.1)
    assert view['Target Frame'] == '<Fixed Frame>'
