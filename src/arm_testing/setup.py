from setuptools import find_packages, setup

package_name = 'arm_testing'

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
    description='Test and benchmark harness of the arm_ik packages',
    license='Apache-2.0',
)
