from setuptools import find_packages, setup

package_name = 'arm_ik'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='arm_ik maintainers',
    maintainer_email='maintainers@arm-ik.dev',
    description='Inverse kinematics core and nodes for robot arms',
    license='Apache-2.0',
    extras_require={'test': ['pytest', 'hypothesis']},
    entry_points={
        'console_scripts': [
            'arm_info = arm_ik.nodes.arm_info:main',
            'ik_server = arm_ik.nodes.ik_server:main',
            'trajectory_executor = arm_ik.nodes.trajectory_executor:main',
            'servo_node = arm_ik.nodes.servo_node:main',
            'move_group = arm_ik.nodes.move_group:main',
            'ik_client = arm_ik.client:main',
            'ik_path = arm_ik.path_client:main',
            'arm_config = arm_ik.arm_config:main',
            'arm_reachability = arm_ik.reachability_command:main',
            'target_input = arm_ik.nodes.target_input:main',
            'safety_monitor = arm_ik.nodes.safety_monitor:main',
            'lab_viewer = arm_ik.nodes.lab_viewer:main',
            'markers = arm_ik.nodes.markers:main',
            'controller_stand_in = arm_ik.nodes.controller_stand_in:main',
            'servo_bridge = arm_ik.nodes.servo_bridge:main',
            'teleop = arm_ik.nodes.teleop:main',
            'servo_calibrate = arm_ik.servo_calibrate_command:main',
            'servo_client = arm_ik.servo_client:main',
        ],
    },
)
