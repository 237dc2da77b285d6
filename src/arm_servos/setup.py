from setuptools import find_packages, setup

package_name = 'arm_servos'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/calibration', ['calibration/so101.yaml',
                                                     'calibration/so101_leader.yaml']),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='arm_ik maintainers',
    maintainer_email='maintainers@arm-ik.dev',
    description='Serial-bus servos (Feetech STS/SCS, Dynamixel X): bus, calibration, safety, '
                'simulated bus',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'servo_sim = arm_servos.sim.server:main',
        ],
    },
)
