"""The browser lab: ROS-free helpers of the ``lab_viewer`` node (checks, drawing, panel).

Everything here works on plain numbers and viser handles; the node in
``arm_ik.nodes.lab_viewer`` adapts ROS messages, services and parameters to it.
"""
