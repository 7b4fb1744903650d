"""Pure image logic for reading dice from a camera: no camera, file or clock access here.

Frames come in as numpy arrays (BGR, as OpenCV and picamera2's ``BGR888`` give them); the
hardware layer (``bunco_pi.hardware.camera``) owns the camera and the threads.
"""
