from setuptools import find_packages, setup

package_name = 'arm_kinematics'

setup(
    name=package_name,
    version='0.2.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    # The core's own needs; ROS is not one of them (ament_index_python is used when present).
    install_requires=['setuptools', 'numpy', 'numba', 'PyYAML', 'coal', 'scipy', 'ompl', 'trimesh',
                      'xacro'],
    zip_safe=True,
    maintainer='arm_ik maintainers',
    maintainer_email='maintainers@arm-ik.dev',
    description='ROS-free kinematics core for robot arms: URDF models, FK and Jacobians, '
                'IK solvers, collision, planning and motion laws',
    license='Apache-2.0',
    # The core's own tests need these and nothing else (pinned as requirements/core.txt):
    # example-robot-data's real arms, and yourdfpy as an independent FK and URDF reader.
    # The tests' helpers (src/arm_testing) are read from the source tree when not installed.
    extras_require={'test': ['pytest==9.2.0', 'hypothesis==6.170.17',
                             'example-robot-data==6.0.0', 'yourdfpy==0.0.60']},
)
