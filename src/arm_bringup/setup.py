from glob import glob

from setuptools import find_packages, setup

package_name = 'arm_bringup'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/config', glob('config/*.yaml')),
        ('share/' + package_name + '/config/controllers', glob('config/controllers/*')),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='arm_ik maintainers',
    maintainer_email='maintainers@arm-ik.dev',
    description='Launch files, node parameters and the launch-free demo runner of the arm IK '
                'pipeline',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'demo = arm_bringup.demo:main',
            'mcap_recorder = arm_bringup.recorder:main',
        ],
    },
)
