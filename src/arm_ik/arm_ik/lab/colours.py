"""The lab's colours (RGB, 0-255) in one place, named by what they show: the 3D view, its
scene objects and the joint map image draw with these."""

# The 3D view (scene, object_view, urdf_view).
REACH_SHELL = (120, 170, 255)
REACH_HOLE = (255, 150, 60)
FREE = (60, 200, 90)              # the obstacle touching nothing, the ball lying free
TOUCHING = (230, 40, 40)          # the obstacle or a scene object in contact with the arm
CARRIED = (255, 140, 20)          # the ball on the tool
GHOST = (150, 150, 165)           # snapshots along a planned path
CONTACT_DOT = (255, 20, 20)       # measured contact points
SCENE_OBJECT = (140, 115, 217)    # the RViz markers' colour (scene_messages.SCENE_RGBA)
CAPSULE_COLOUR = (38, 89, 191)    # a link drawn as its safety capsule
JOINT_COLOUR = (90, 90, 100)

# The joint map's cells (joint_map_image): floor and contact, with self-collision and scene
# contact (a light tint of SCENE_OBJECT) mixed in.
MAP_FREE = (236, 240, 244)
MAP_FLOOR = (150, 128, 104)
MAP_CONTACT = (232, 80, 72)
MAP_BOTH = (140, 30, 30)
MAP_SELF_COLLISION = (110, 50, 160)
MAP_SCENE_CONTACT = (180, 160, 230)
