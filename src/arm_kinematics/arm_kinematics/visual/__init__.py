"""What is drawn of an arm, as plain values: marker geometry, colours and texts
(``arm_visual``) and the markers node's scene and its rules (``marker_scene``)."""
