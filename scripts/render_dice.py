"""Render photorealistic dice trays with Blender (Cycles, CPU), labelled from the scene itself.

    pip install -e '.[render]'            # Blender as a Python module (bpy), for rendering only
    nice -n 19 python3 scripts/render_dice.py renders/ --start 0 --count 200

Each picture N is made from its own seed (``--seed`` + N), so any picture can be made again
alone, batches can run side by side (``--start``), and a batch stopped half way is resumed by
running it again (pictures already written are skipped). What varies, every picture afresh:

- dice: rounded corners, any body colour, dark or light pips, painted (flat) or drilled (a
  hollow with paint in it); opaque, marbled or translucent plastic, glossy or matte; size;
- the tray: felt, wood, cardboard, plastic or paper, in many colours, with walls;
- light: one to three lamps, small (hard shadows, glare on glossy dice) or large (soft), of
  warm or cold colour (the camera's white balance is not corrected), and the room's light;
  rendered unclipped, then exposed as the Pi camera's automatic exposure exposes a frame
  (``auto_expose``), off its target by -0.8 to +0.6 stops. (Pictures rendered before that were
  exposed at a fixed random setting, and about a third of them had more than a fifth of their
  pixels clipped white, which no automatically exposed camera shows);
- the camera: height and tilt as a tray mount gives, lens; after rendering, motion blur (a die
  or the camera still moving), noise and JPEG at a random quality.

Labels come from the scene: each die's top face, its centre and the box round its corners
projected into the picture, written as ``labels/NAME.txt`` (YOLO: ``face-1 x y w h``, 0..1),
the layout of ``../shared/datasets/dice-photos``. A die that cannot be read (cocked, leaning on
a wall or on another die; partly out of the picture; mostly under a hand) is written to
``labels_unclear/NAME.txt`` with class 6 instead. ``scenes/NAME.json`` says what was drawn,
and where the camera was (its place, turn and lens: the picture's corners can be found on
the floor from it).

Scene kinds (``--kinds``; by default mostly plain rolls): ``roll`` (one to five dice lying
flat), ``cocked`` (one die leaning), ``hand`` (a hand over the tray), ``four`` (four dice),
``out`` (a die partly out of the picture or on the tray's rim), ``scatter`` (six to thirty dice
of two to six sets of different looks strewn over a wide tray or table, seen at a slant as a
phone held over them sees them; some lean on others, some hide others: the kind of photo a
group takes of its own dice, where a tray camera's throw is three dice seen from above), ``low``
(the same heap seen from low down, 50 to 75 degrees off straight down, as a phone held at the
table's edge sees it: many dice show a side face larger than their top).

``--throws N`` makes N pictures of each tray, the dice thrown again for each (the same tray,
light and camera; ``rNNNNNN-t2`` ...), and ``--moved`` then nudges the camera on its mount
(1 to 3 cm sideways, turned and tilted a few degrees) for as many throws again
(``rNNNNNN-moved``, ``rNNNNNN-moved-t2`` ...): what ``scripts/measure_tray_view.py`` tells a
moved camera from another throw with. Only the kinds whose dice lie in the tray can be thrown
again (not ``scatter`` or ``low``); a die thrown again lies flat.

A die whose top face the camera sees nearly edge-on (more than ``GRAZING`` degrees from face
on) is labelled unclear, like a cocked one: its top is a sliver, and the face a reader would
see is a side. Pictures rendered before this rule (the slants of ``scatter`` reach it rarely)
may label such a die by its top face.

A 320x320 picture at 12 samples with the denoiser takes about 3 s on one core of a 2020s PC.
"""

from __future__ import annotations

import argparse
import colorsys
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

KINDS = ("roll", "cocked", "hand", "four", "out", "scatter", "low")
DEFAULT_MIX = "roll:0.7,cocked:0.1,hand:0.07,four:0.06,out:0.07"

# A top face seen more than this many degrees from face on is too thin a sliver to read.
GRAZING = 70.0

# Pip positions on a face, in units of the corner pips' offset from the centre (as faces.py).
LAYOUTS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    5: [(-1, -1), (-1, 1), (1, -1), (1, 1), (0, 0)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}
# The face on each side of the die as built (opposite faces add up to seven).
SIDES = {1: (0, 0, 1), 6: (0, 0, -1), 2: (1, 0, 0), 5: (-1, 0, 0), 3: (0, 1, 0), 4: (0, -1, 0)}


def parse_mix(text: str) -> dict[str, float]:
    mix = {}
    for part in text.split(","):
        name, _, share = part.partition(":")
        if name not in KINDS:
            raise SystemExit(f"--kinds: unknown kind {name!r} (use {', '.join(KINDS)})")
        try:
            mix[name] = float(share or 1)
        except ValueError:
            raise SystemExit(f"--kinds: {part!r} is not kind:share") from None
    total = sum(mix.values())
    if total <= 0:
        raise SystemExit("--kinds: the shares add up to nothing")
    return {k: v / total for k, v in mix.items()}


# ---------------------------------------------------------------- random looks (no Blender here)


def hsv(h: float, s: float, v: float) -> tuple[float, float, float, float]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return (r, g, b, 1.0)


def dice_look(rng: np.random.Generator) -> dict:
    """One set of dice: every die of a roll looks alike, as a table's set does."""
    roll = rng.random()
    if roll < 0.25:  # white or ivory
        body = hsv(rng.uniform(0.08, 0.16), rng.uniform(0, 0.15), rng.uniform(0.75, 0.95))
    elif roll < 0.35:  # black or grey
        body = hsv(rng.uniform(0, 1), rng.uniform(0, 0.2), rng.uniform(0.01, 0.35))
    else:  # any colour, pale to deep
        body = hsv(rng.uniform(0, 1), rng.uniform(0.35, 1.0), rng.uniform(0.15, 0.95))
    brightness = max(body[:3])
    light_pips = brightness < 0.45 or (brightness < 0.6 and rng.random() < 0.6)
    if light_pips:
        pip = hsv(rng.uniform(0, 1), rng.uniform(0, 0.15), rng.uniform(0.8, 0.95))
        if rng.random() < 0.1:  # gold or silver paint
            pip = hsv(rng.uniform(0.1, 0.15), rng.uniform(0.4, 0.7), rng.uniform(0.7, 0.9))
    else:
        pip = hsv(rng.uniform(0, 1), rng.uniform(0, 0.6), rng.uniform(0.0, 0.15))
    material = rng.choice(["opaque", "marbled", "translucent"], p=[0.6, 0.2, 0.2])
    return {
        "body": body,
        "pip": pip,
        "vein": hsv(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1, 0.95)),
        "material": str(material),
        "roughness": float(rng.choice([rng.uniform(0.05, 0.25), rng.uniform(0.35, 0.7)])),
        "drilled": bool(rng.random() < 0.6),
        "pip_size": float(rng.uniform(0.08, 0.11)),  # radius, of the die's edge
        "spread": float(rng.uniform(0.22, 0.27)),  # corner pip offset, of the die's edge
        "bevel": float(rng.uniform(0.05, 0.1)),  # of the die's edge: the face is flat within
    }


def tray_look(rng: np.random.Generator) -> dict:
    kind = str(rng.choice(["felt", "wood", "cardboard", "plastic", "paper"]))
    if kind == "felt":
        colour = hsv(rng.uniform(0, 1), rng.uniform(0.3, 0.9), rng.uniform(0.05, 0.6))
    elif kind == "wood":
        colour = hsv(rng.uniform(0.05, 0.1), rng.uniform(0.4, 0.8), rng.uniform(0.15, 0.8))
    elif kind == "cardboard":
        colour = hsv(rng.uniform(0.07, 0.11), rng.uniform(0.0, 0.55), rng.uniform(0.3, 0.75))
    elif kind == "plastic":
        colour = hsv(rng.uniform(0, 1), rng.uniform(0, 0.95), rng.uniform(0.05, 0.95))
    else:
        colour = hsv(rng.uniform(0, 1), rng.uniform(0, 0.3), rng.uniform(0.6, 0.95))
    return {"kind": kind, "colour": colour, "wall": float(rng.uniform(0.015, 0.05))}


# ---------------------------------------------------------------- Blender


def _bpy():
    try:
        import bpy  # noqa: PLC0415
    except ImportError:
        raise SystemExit("bpy is not installed: pip install -e '.[render]'") from None
    return bpy


def _material(bpy, name: str):
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    return mat, mat.node_tree.nodes, mat.node_tree.links, mat.node_tree.nodes["Principled BSDF"]


def _set(bsdf, name: str, value) -> None:
    if name in bsdf.inputs:
        bsdf.inputs[name].default_value = value


def body_material(bpy, look: dict, rng: np.random.Generator):
    mat, nodes, links, bsdf = _material(bpy, "body")
    _set(bsdf, "Base Color", look["body"])
    _set(bsdf, "Roughness", look["roughness"])
    _set(bsdf, "Coat Weight", float(rng.uniform(0, 0.6)) if look["roughness"] < 0.3 else 0.0)
    if look["material"] == "marbled":
        noise = nodes.new("ShaderNodeTexNoise")
        noise.inputs["Scale"].default_value = float(rng.uniform(2, 8))
        noise.inputs["Detail"].default_value = 6.0
        noise.inputs["Distortion"].default_value = float(rng.uniform(0.5, 3))
        ramp = nodes.new("ShaderNodeValToRGB")
        ramp.color_ramp.elements[0].position = float(rng.uniform(0.4, 0.5))
        ramp.color_ramp.elements[0].color = look["body"]
        ramp.color_ramp.elements[1].position = float(rng.uniform(0.55, 0.7))
        ramp.color_ramp.elements[1].color = look["vein"]
        coords = nodes.new("ShaderNodeTexCoord")
        links.new(coords.outputs["Object"], noise.inputs["Vector"])
        links.new(noise.outputs["Fac"], ramp.inputs["Fac"])
        links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    elif look["material"] == "translucent":
        _set(bsdf, "Transmission Weight", float(rng.uniform(0.5, 0.95)))
        _set(bsdf, "IOR", 1.49)
        _set(bsdf, "Roughness", float(min(look["roughness"], 0.3)))
    return mat


def plain_material(bpy, name: str, colour, roughness: float, rng: np.random.Generator, kind: str = ""):
    mat, nodes, links, bsdf = _material(bpy, name)
    _set(bsdf, "Base Color", colour)
    _set(bsdf, "Roughness", roughness)
    if kind in ("felt", "cardboard", "paper", "wood"):
        coords = nodes.new("ShaderNodeTexCoord")
        if kind == "wood":
            tex = nodes.new("ShaderNodeTexWave")
            tex.inputs["Scale"].default_value = float(rng.uniform(1, 4))
            tex.inputs["Distortion"].default_value = float(rng.uniform(2, 10))
            tex.inputs["Detail"].default_value = 4.0
        else:
            tex = nodes.new("ShaderNodeTexNoise")
            fine = rng.uniform(80, 400) if kind == "felt" else rng.uniform(5, 60)
            tex.inputs["Scale"].default_value = float(fine)
            tex.inputs["Detail"].default_value = 8.0
        links.new(coords.outputs["Object"], tex.inputs["Vector"])
        mix = nodes.new("ShaderNodeMix")
        mix.data_type = "RGBA"
        mix.inputs["Factor"].default_value = float(rng.uniform(0.1, 0.35))
        mix.inputs["A"].default_value = colour
        darker = tuple(c * float(rng.uniform(0.4, 0.8)) for c in colour[:3]) + (1.0,)
        mix.inputs["B"].default_value = darker
        links.new(tex.outputs["Fac"], mix.inputs["Factor"])
        links.new(mix.outputs["Result"], bsdf.inputs["Base Color"])
        bump = nodes.new("ShaderNodeBump")
        bump.inputs["Strength"].default_value = float(rng.uniform(0.05, 0.3))
        links.new(tex.outputs["Fac"], bump.inputs["Height"])
        links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])
    return mat


def make_die(bpy, edge: float, look: dict, body, pip_mat):
    """A die of ``edge`` metres, face 1 up, at the origin; returns the object."""
    bpy.ops.mesh.primitive_cube_add(size=edge)
    die = bpy.context.active_object
    bevel = die.modifiers.new("round", "BEVEL")
    bevel.width = look["bevel"] * edge
    bevel.segments = 4
    die.data.materials.append(body)
    radius = look["pip_size"] * edge
    spread = look["spread"] * edge
    cutters = []
    paints = []
    for face, normal in SIDES.items():
        n = np.array(normal, float)
        # two axes across the face
        u = np.array((0, 1, 0) if abs(n[0]) > 0.5 else (1, 0, 0), float)
        v = np.cross(n, u)
        for a, b in LAYOUTS[face]:
            centre = n * edge / 2 + spread * (a * u + b * v)
            if look["drilled"]:
                depth = radius * 0.5
                bpy.ops.mesh.primitive_uv_sphere_add(radius=radius * 1.1, segments=12, ring_count=6,
                                                     location=tuple(centre + n * (radius * 1.1 - depth)))
                cutters.append(bpy.context.active_object)
                # paint in the hollow's bottom: a disc where the hollow is 0.63 of the pip wide
                bpy.ops.mesh.primitive_cylinder_add(vertices=16, radius=radius * 0.65, depth=edge * 0.005,
                                                    location=tuple(centre - n * radius * 0.3))
                paints.append(bpy.context.active_object)
                paints[-1].rotation_euler = _euler_to(n)
            else:
                bpy.ops.mesh.primitive_cylinder_add(vertices=20, radius=radius, depth=edge * 0.01,
                                                    location=tuple(centre))
                disc = bpy.context.active_object
                disc.rotation_euler = _euler_to(n)
                paints.append(disc)
    if cutters:
        bpy.ops.object.select_all(action="DESELECT")
        for c in cutters:
            c.select_set(True)
        bpy.context.view_layer.objects.active = cutters[0]
        bpy.ops.object.join()
        cutter = bpy.context.active_object
        boolean = die.modifiers.new("pips", "BOOLEAN")
        boolean.operation = "DIFFERENCE"
        if "EXACT" in type(boolean).bl_rna.properties["solver"].enum_items:
            boolean.solver = "EXACT"
        boolean.object = cutter
        bpy.context.view_layer.objects.active = die
        bpy.ops.object.modifier_apply(modifier="round")
        bpy.ops.object.modifier_apply(modifier="pips")
        bpy.data.objects.remove(cutter, do_unlink=True)
    else:
        bpy.context.view_layer.objects.active = die
        bpy.ops.object.modifier_apply(modifier="round")
    for poly in die.data.polygons:
        # Smooth only the rounded edges and the hollows: a flat face shaded smooth takes its
        # normals from its corners, and once the pips are cut into it (long thin polygons
        # between them) glossy dice showed streaks and crosses no real die has.
        poly.use_smooth = max(abs(c) for c in poly.normal) < 0.999
    for p in paints:
        p.data.materials.append(pip_mat)
    # one object (body and pips), so the other dice of the roll are copies sharing its mesh
    bpy.ops.object.select_all(action="DESELECT")
    for p in paints:
        p.select_set(True)
    die.select_set(True)
    bpy.context.view_layer.objects.active = die
    bpy.ops.object.join()
    return die


def copy_die(bpy, die):
    twin = die.copy()
    bpy.context.scene.collection.objects.link(twin)
    return twin


def _euler_to(normal):
    from mathutils import Vector  # noqa: PLC0415

    return Vector((0, 0, 1)).rotation_difference(Vector(tuple(float(c) for c in normal))).to_euler()


def up_rotation(face: int, yaw: float):
    """The rotation that turns ``face`` to +Z, then turns the die ``yaw`` about the vertical."""
    from mathutils import Matrix, Vector  # noqa: PLC0415

    tilt = Vector(SIDES[face]).rotation_difference(Vector((0, 0, 1))).to_matrix()
    return Matrix.Rotation(yaw, 3, "Z") @ tilt


def make_hand(bpy, rng: np.random.Generator, at, height: float):
    """A rough hand (palm and four fingers and a thumb) in skin colours, reaching in."""
    from mathutils import Euler  # noqa: PLC0415

    skin = plain_material(bpy, "skin", hsv(rng.uniform(0.02, 0.09), rng.uniform(0.25, 0.6),
                                           rng.uniform(0.25, 0.95)), 0.5, rng)
    _set(skin.node_tree.nodes["Principled BSDF"], "Subsurface Weight", 0.3)
    parts = []
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.045, location=(0, 0, 0))
    palm = bpy.context.active_object
    palm.scale = (1.0, 1.2, 0.35)
    parts.append(palm)
    for i in range(4):
        bpy.ops.mesh.primitive_cylinder_add(radius=0.009, depth=0.075,
                                            location=(-0.03 + 0.02 * i, 0.085, 0.0))
        finger = bpy.context.active_object
        finger.rotation_euler = (math.pi / 2 + float(rng.uniform(-0.3, 0.2)), 0, 0)
        parts.append(finger)
    bpy.ops.mesh.primitive_cylinder_add(radius=0.011, depth=0.06, location=(-0.055, 0.03, 0.0))
    thumb = bpy.context.active_object
    thumb.rotation_euler = (math.pi / 2, 0, 0.8)
    parts.append(thumb)
    bpy.ops.mesh.primitive_cylinder_add(radius=0.03, depth=0.25, location=(0, -0.16, 0.01))
    arm = bpy.context.active_object
    arm.rotation_euler = (math.pi / 2, 0, 0)
    parts.append(arm)
    for p in parts:
        p.data.materials.append(skin)
    bpy.ops.object.select_all(action="DESELECT")
    for p in parts:
        p.select_set(True)
    bpy.context.view_layer.objects.active = palm
    bpy.ops.object.join()
    hand = bpy.context.active_object
    hand.location = (at[0], at[1], height)
    hand.rotation_euler = Euler((float(rng.uniform(-0.2, 0.2)), 0, float(rng.uniform(0, 2 * math.pi))))
    return hand


def free_spot(rng: np.random.Generator, reach: float, placed: list[tuple[float, float]],
              gap: float, attempts: int) -> tuple[float, float] | None:
    """A place within ``reach`` of the middle at least ``gap`` from every die placed, or None."""
    for _attempt in range(attempts):
        x, y = rng.uniform(-reach, reach, 2)
        if all(math.hypot(x - a, y - b) > gap for a, b in placed):
            return (float(x), float(y))
    return None


def place_camera(bpy, scene, height: float, tilt: float, heading: float, turn: float, seen: float):
    """The camera ``height`` above the tray, ``tilt`` from straight down towards ``heading``,
    turned ``turn`` about its axis, its lens showing ``seen`` metres across the middle."""
    from mathutils import Vector  # noqa: PLC0415

    cam_data = bpy.data.cameras.new("camera")
    cam_data.sensor_width = 3.6
    cam = bpy.data.objects.new("camera", cam_data)
    scene.collection.objects.link(cam)
    scene.camera = cam
    offset = height * math.tan(tilt)
    cam.location = (offset * math.sin(heading), -offset * math.cos(heading), height)
    direction = Vector((0, 0, 0)) - cam.location
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    cam.rotation_euler.rotate_axis("Z", turn)
    cam_data.lens = cam_data.sensor_width * direction.length / seen
    return cam


def build_scene(bpy, seed: int, kind: str, size: int, samples: int) -> dict:
    """Everything in one picture, chosen by ``seed``; returns what is needed to label it."""
    from mathutils import Matrix, Vector  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = True
    scene.cycles.max_bounces = 4
    scene.cycles.transmission_bounces = 4
    scene.cycles.diffuse_bounces = 2
    scene.cycles.glossy_bounces = 2
    scene.cycles.seed = seed
    scene.render.resolution_x = size
    scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 1
    # The light as it is, unclipped: the camera's automatic exposure is applied afterwards
    # (auto_expose), off by this many stops as a real one is from scene to scene.
    scene["exposure_bias"] = float(rng.uniform(-0.8, 0.6))
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"  # half floats end at 65504: a lamp seen is more

    look = dice_look(rng)
    tray = tray_look(rng)
    edge = float(rng.uniform(0.014, 0.019))  # metres: Bunco dice are 14-19 mm
    body = body_material(bpy, look, rng)
    pip_mat = plain_material(bpy, "pip", look["pip"], float(rng.uniform(0.2, 0.6)), rng)

    # the tray: a floor and four low walls, half-width ``half`` metres
    half = float(rng.uniform(0.07, 0.14))
    if kind in ("scatter", "low"):
        half *= 2.5  # a wide box lid or a table: the walls are mostly out of sight
    floor_mat = plain_material(bpy, "tray", tray["colour"], float(
        rng.uniform(0.15, 0.4) if tray["kind"] == "plastic" else rng.uniform(0.6, 1.0)), rng, tray["kind"])
    bpy.ops.mesh.primitive_plane_add(size=2 * half, location=(0, 0, 0))
    bpy.context.active_object.data.materials.append(floor_mat)
    wall_h = tray["wall"]
    for sx, sy, w, d in ((1, 0, 0.01, 2 * half), (-1, 0, 0.01, 2 * half),
                         (0, 1, 2 * half, 0.01), (0, -1, 2 * half, 0.01)):
        bpy.ops.mesh.primitive_cube_add(
            size=1, location=(sx * (half + 0.005), sy * (half + 0.005), wall_h / 2))
        wall = bpy.context.active_object
        wall.scale = (w + 0.02 * abs(sy), d + 0.02 * abs(sx), wall_h)
        wall.data.materials.append(floor_mat)
    # the table around the tray
    table = plain_material(bpy, "table", hsv(rng.uniform(0, 1), rng.uniform(0, 0.6), rng.uniform(0.05, 0.8)),
                           float(rng.uniform(0.3, 0.9)), rng, str(rng.choice(["wood", "paper", "felt", ""])))
    bpy.ops.mesh.primitive_plane_add(size=4, location=(0, 0, -0.001))
    bpy.context.active_object.data.materials.append(table)

    # how much of the tray the camera will show: the dice are put where it sees them
    seen = 2 * half * float(rng.uniform(0.45, 1.2))
    reach = min(half - edge, 0.3 * seen)  # inside the picture however the camera is turned
    if kind in ("scatter", "low"):
        return build_scatter(bpy, rng, scene, edge, half, wall_h, look, body, pip_mat, kind)
    # the dice
    count = {"four": 4}.get(kind, int(rng.choice([1, 2, 3, 3, 3, 4, 5])) if kind == "roll" else 3)
    placed: list[tuple[float, float]] = []
    dice = []
    model = None
    cocked_index = 0 if kind == "cocked" else -1
    for i in range(count):
        face = int(rng.integers(1, 7))
        yaw = float(rng.uniform(0, 2 * math.pi))
        spot = free_spot(rng, reach, placed, 1.6 * edge, 50)
        if spot is None:
            continue
        if model is None:
            die = model = make_die(bpy, edge, look, body, pip_mat)
        else:
            die = copy_die(bpy, model)
        rotation = up_rotation(face, yaw)
        z = edge / 2
        state = "flat"
        if i == cocked_index:
            # leaning: turned 15-40 degrees about a horizontal axis, resting on an edge
            lean = math.radians(float(rng.uniform(15, 40)))
            axis = Vector((math.cos(yaw), math.sin(yaw), 0))
            rotation = Matrix.Rotation(lean, 3, axis) @ rotation
            z = edge / 2 * (math.cos(lean) + math.sin(lean))
            if rng.random() < 0.5 and half - edge < 0.45 * seen:  # against a wall in view
                spot = (float(np.sign(spot[0]) * (half - edge * 0.6)), spot[1])
            state = "cocked"
        die.matrix_world = Matrix.Translation((spot[0], spot[1], z)) @ rotation.to_4x4()
        placed.append(spot)
        dice.append({"object": die, "face": face, "state": state, "edge": edge})
    if kind == "cocked" and len(dice) > 1 and rng.random() < 0.4:
        # the leaning die rests on its neighbour instead of the wall
        lean_on = dice[1]["object"].matrix_world.translation
        die = dice[0]["object"]
        x, y = lean_on.x + edge * 0.95, lean_on.y
        die.matrix_world = Matrix.Translation((x, y, die.matrix_world.translation.z + edge * 0.3)) @ \
            die.matrix_world.to_3x3().to_4x4()

    # the camera: over the tray, as a mount holds it
    height = float(rng.uniform(0.28, 0.5))
    tilt = math.radians(float(rng.uniform(0, 22)))
    heading = float(rng.uniform(0, 2 * math.pi))
    # a lens that shows the tray (and a little around it), sometimes a little cut
    cam = place_camera(bpy, scene, height, tilt, heading, float(rng.uniform(0, 2 * math.pi)), seen)

    if kind == "out" and dice:
        # move one die so the picture's edge or the tray's rim cuts it
        die = dice[0]
        die["object"].location.x = float(np.sign(rng.uniform(-1, 1)) * (half + 0.004))
        die["object"].location.z = wall_h + edge / 2 if rng.random() < 0.5 else edge / 2
        die["state"] = "out"

    hand = None
    if kind == "hand":
        at = dice[int(rng.integers(len(dice)))]["object"].location if dice else Vector((0, 0, 0))
        hand = make_hand(bpy, rng, (at.x + float(rng.uniform(-0.02, 0.02)), at.y - 0.02),
                         float(rng.uniform(0.03, 0.09)))

    light_room(bpy, rng, scene)
    bpy.context.view_layer.update()
    return {"scene": scene, "camera": cam, "dice": dice, "hand": hand, "look": look, "tray": tray,
            "kind": kind, "height": height, "tilt_degrees": math.degrees(tilt), "reach": reach}


def build_scatter(bpy, rng: np.random.Generator, scene, edge: float, half: float, wall_h: float,
                  look: dict, body, pip_mat, kind: str) -> dict:
    """Many dice of several sets on a wide floor, seen at a slant (``scatter``) or from low
    down (``low``)."""
    from mathutils import Matrix, Vector  # noqa: PLC0415

    sets = [(look, body, pip_mat)]
    for n in range(int(rng.integers(1, 6))):
        other = dice_look(rng)
        sets.append((other, body_material(bpy, other, rng),
                     plain_material(bpy, f"pip{n}", other["pip"], float(rng.uniform(0.2, 0.6)), rng)))
    models: dict[int, object] = {}
    # a slanted view: the camera well off to one side, looking at the middle of the heap
    height = float(rng.uniform(0.2, 0.5))
    tilt = math.radians(float(rng.uniform(*((50, 75) if kind == "low" else (10, 50)))))
    heading = float(rng.uniform(0, 2 * math.pi))
    seen = float(rng.uniform(0.16, 0.4))  # metres across the picture's middle
    spread = min(half - edge, 0.42 * seen)
    count = int(rng.integers(6, 31))
    placed: list[tuple[float, float]] = []
    dice = []
    for _ in range(count):
        spot = free_spot(rng, spread, placed, 1.2 * edge, 40)
        if spot is None:
            continue
        which = int(rng.integers(len(sets)))
        if which not in models:
            models[which] = make_die(bpy, edge, *sets[which])
            die = models[which]
        else:
            die = copy_die(bpy, models[which])
        face = int(rng.integers(1, 7))
        rotation = up_rotation(face, float(rng.uniform(0, 2 * math.pi)))
        z = edge / 2
        state = "flat"
        if rng.random() < 0.1:  # leaning on a neighbour or on a crumb of nothing: not readable
            lean = math.radians(float(rng.uniform(12, 35)))
            axis = Vector((float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), 0)).normalized()
            rotation = Matrix.Rotation(lean, 3, axis) @ rotation
            z = edge / 2 * (math.cos(lean) + math.sin(lean))
            state = "cocked"
        elif placed and rng.random() < 0.04:  # one die on top of another
            below = dice[int(rng.integers(len(dice)))]
            if below["state"] == "flat":
                at = below["object"].matrix_world.translation
                dx, dy = float(rng.uniform(-0.2, 0.2)), float(rng.uniform(-0.2, 0.2))
                spot = (at.x + dx * edge, at.y + dy * edge)
                z = 1.5 * edge
        die.matrix_world = Matrix.Translation((spot[0], spot[1], z)) @ rotation.to_4x4()
        placed.append(spot)
        dice.append({"object": die, "face": face, "state": state, "edge": edge})

    cam = place_camera(bpy, scene, height, tilt, heading, float(rng.uniform(-0.4, 0.4)), seen)
    light_room(bpy, rng, scene)
    bpy.context.view_layer.update()
    return {"scene": scene, "camera": cam, "dice": dice, "hand": None, "look": look,
            "tray": {"kind": "wide", "wall": wall_h}, "kind": kind, "height": height,
            "tilt_degrees": math.degrees(tilt), "sets": len(sets)}


def light_room(bpy, rng: np.random.Generator, scene) -> None:
    """The room's light (the world) and one to three lamps, warm or cold."""
    from mathutils import Vector  # noqa: PLC0415

    world = bpy.data.worlds.new("room")
    world.use_nodes = True
    warm = float(rng.uniform(-1, 1))  # white balance: - cold (blue), + warm (orange)
    room = (1.0 + 0.25 * warm, 1.0, 1.0 - 0.25 * warm, 1.0)
    world.node_tree.nodes["Background"].inputs["Color"].default_value = room
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = float(rng.uniform(0.05, 0.8))
    scene.world = world
    for _ in range(int(rng.choice([1, 1, 2, 2, 3]))):
        lamp = bpy.data.lights.new("lamp", "AREA")
        lamp.size = float(np.exp(rng.uniform(np.log(0.005), np.log(0.6))))  # small: hard shadows
        tint = warm + float(rng.uniform(-0.3, 0.3))
        lamp.color = (1.0 + 0.2 * tint, 1.0, 1.0 - 0.2 * tint)
        lamp.energy = float(rng.uniform(2, 14))
        obj = bpy.data.objects.new("lamp", lamp)
        scene.collection.objects.link(obj)
        r = float(rng.uniform(0.1, 0.7))
        a = float(rng.uniform(0, 2 * math.pi))
        obj.location = (r * math.cos(a), r * math.sin(a), float(rng.uniform(0.3, 1.0)))
        obj.rotation_euler = (Vector((0, 0, 0)) - obj.location).to_track_quat("-Z", "Y").to_euler()


def top_face(world):
    """The face of a die (its world matrix) that looks most nearly up: its number, its normal
    and two axes across it, in the die's own frame."""
    from mathutils import Vector  # noqa: PLC0415

    face, normal = max(SIDES.items(), key=lambda kv: (world.to_3x3() @ Vector(kv[1])).z)
    n = Vector(normal)
    u = Vector((0, 1, 0)) if abs(n.x) > 0.5 else Vector((1, 0, 0))
    return face, n, u, n.cross(u)


def top_face_box(scene, cam, die: dict) -> tuple[float, float, float, float, float, float, int]:
    """The top face's centre and box in picture fractions (x right, y down), how upright the
    face is (1 = facing straight up), how many degrees from face on the camera sees it, and
    its number."""
    from bpy_extras.object_utils import world_to_camera_view  # noqa: PLC0415

    half = die["edge"] / 2
    world = die["object"].matrix_world
    face, n, u, v = top_face(world)
    corners = [world @ (n * half + (a * u + b * v) * half) for a in (-1, 1) for b in (-1, 1)]
    centre = world @ (n * half)
    points = [world_to_camera_view(scene, cam, p) for p in corners]
    c = world_to_camera_view(scene, cam, centre)
    xs = [p.x for p in points]
    ys = [1 - p.y for p in points]
    normal = (world.to_3x3() @ n).normalized()
    upright = float(normal.z)
    slant = math.degrees(normal.angle(cam.matrix_world.translation - centre))
    return c.x, 1 - c.y, max(xs) - min(xs), max(ys) - min(ys), upright, slant, face


def linear_pixels(bpy, path: Path) -> np.ndarray:
    """A rendered EXR's linear RGB, rows top down."""
    image = bpy.data.images.load(str(path))
    width, height = image.size
    channels = image.channels
    flat = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(flat)
    bpy.data.images.remove(image)
    return flat.reshape(height, width, channels)[::-1, :, :3]


# The Pi camera's automatic exposure (libcamera's AGC with its default tuning): the gain at
# which the sensor's picture (each pixel clipped at white, as a sensor clips it), metered as a
# grid of ZONES (rows, columns) of mean luminance, has a centre-weighted mean of Y_TARGET; raised,
# if need be, until the brightest 2% of pixels average HIGHLIGHT_TARGET. Clipped first, a glint
# or a lamp-lit corner counts as white and no more, so it cannot darken the rest. Each is found
# by halving a range of gains (what is metered only grows with the gain); GAINS bounds it, as a
# camera's longest shutter and highest gain do. Luminance is Rec. 709's (libcamera's statistics
# weigh the channels a little otherwise: no matter here).
ZONES = (12, 16)
Y_TARGET = 0.16
HIGHLIGHT_TARGET = 0.5
GAINS = (1e-4, 1e4)
LUMINANCE = np.array([0.2126, 0.7152, 0.0722], np.float32)


def zone_means(luminance: np.ndarray, zones: tuple[int, int]) -> np.ndarray:
    """The mean of each zone of a grid of ``zones`` (rows, columns), no more than it has pixels."""
    rows = np.array_split(luminance, zones[0], axis=0)
    return np.array([[float(cell.mean()) for cell in np.array_split(row, zones[1], axis=1)] for row in rows])


def _gain_for(metered, target: float) -> float:
    """The least gain in GAINS at which ``metered(gain)`` (never less at a higher gain) reaches
    ``target``, halving the range on a log scale."""
    low, high = np.log(GAINS[0]), np.log(GAINS[1])
    if metered(float(np.exp(high))) < target:
        return float(np.exp(high))
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if metered(float(np.exp(middle))) >= target else (middle, high)
    return float(np.exp(high))


def auto_expose(linear: np.ndarray, bias: float = 0.0) -> np.ndarray:
    """An 8-bit sRGB picture of linear light, exposed as a camera's automatic exposure would,
    ``bias`` stops brighter or darker than its target. What is brighter than white clips."""
    linear = np.maximum(np.nan_to_num(np.asarray(linear, np.float32), nan=0.0, posinf=65504.0), 0.0)
    grid = (min(ZONES[0], linear.shape[0]), min(ZONES[1], linear.shape[1]))  # a tiny picture: fewer
    ys = (np.arange(grid[0]) + 0.5) / grid[0] - 0.5
    xs = (np.arange(grid[1]) + 0.5) / grid[1] - 0.5
    weight = np.exp(-(ys[:, None] ** 2 + xs[None, :] ** 2) / (2 * 0.3**2))
    weight /= weight.sum()
    flat = linear.reshape(-1, 3)
    top = flat[np.argsort(flat @ LUMINANCE)[int(0.98 * len(flat)):]]

    def seen(light: np.ndarray, gain: float) -> np.ndarray:
        return np.minimum(light * gain, 1.0) @ LUMINANCE

    gain = max(_gain_for(lambda g: float((zone_means(seen(linear, g), grid) * weight).sum()), Y_TARGET),
               _gain_for(lambda g: float(seen(top, g).mean()), HIGHLIGHT_TARGET))
    exposed = np.clip(linear * (gain * 2.0**bias), 0.0, 1.0)
    encoded = np.where(exposed <= 0.0031308, 12.92 * exposed, 1.055 * exposed ** (1 / 2.4) - 0.055)
    return np.round(encoded * 255).astype(np.uint8)


def finish(picture: np.ndarray, out: Path, rng: np.random.Generator) -> None:
    """Motion blur, sensor noise and JPEG, as a camera adds them (Pillow: no OpenCV needed)."""
    from PIL import Image  # noqa: PLC0415

    image = picture.astype(np.float32)
    if rng.random() < 0.3:  # a die or the camera still moving: the average of shifted copies
        length = int(rng.integers(3, 10))
        angle = float(rng.uniform(0, math.pi))
        steps = np.linspace(-(length - 1) / 2, (length - 1) / 2, length)
        image = np.mean([np.roll(image, (int(round(t * math.sin(angle))), int(round(t * math.cos(angle)))),
                                 axis=(0, 1)) for t in steps], axis=0)
    if rng.random() < 0.6:
        image += rng.normal(0, rng.uniform(1, 6), image.shape)
    jpeg = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8))
    jpeg.save(out, "JPEG", quality=int(rng.integers(35, 95)))


def render_one(bpy, out: Path, index: int, seed: int, mix: dict[str, float], size: int, samples: int,
               throws: int = 1, moved: bool = False) -> str:
    """Picture ``index``; with ``throws`` more than 1, the same tray, light and camera with the
    dice thrown again (``rNNNNNN-t2`` ...); with ``moved``, then the camera nudged on its mount
    and as many throws again (``rNNNNNN-moved``, ``rNNNNNN-moved-t2`` ...)."""
    name = f"r{index:06d}"
    last = name + ("-moved" if moved else "") + (f"-t{throws}" if throws > 1 else "")
    if (out / "images" / f"{last}.jpg").exists():
        return name
    picture_seed = seed + index
    rng = np.random.default_rng([picture_seed, 7])
    kind = str(rng.choice(list(mix), p=list(mix.values())))
    built = build_scene(bpy, picture_seed, kind, size, samples)
    if (throws > 1 or moved) and "reach" not in built:
        raise SystemExit(f"{name}: a {kind} picture cannot be thrown again (--throws, --moved): "
                         "use --kinds with roll, cocked, hand, four or out")
    shoot(bpy, out, name, built, picture_seed, np.random.default_rng([picture_seed, 11]))
    for throw in range(2, throws + 1):
        throw_again(bpy, built, np.random.default_rng([picture_seed, 13, throw]))
        shoot(bpy, out, f"{name}-t{throw}", built, picture_seed,
              np.random.default_rng([picture_seed, 11, throw]))
    if moved:
        nudge_camera(bpy, built, np.random.default_rng([picture_seed, 17]))
        for throw in range(1, throws + 1):
            key = [0] if throw == 1 else [0, throw]
            throw_again(bpy, built, np.random.default_rng([picture_seed, 13, *key]))
            shoot(bpy, out, f"{name}-moved" + (f"-t{throw}" if throw > 1 else ""), built, picture_seed,
                  np.random.default_rng([picture_seed, 11, *key]))
    return name


def shoot(bpy, out: Path, name: str, built: dict, picture_seed: int, finishing: np.random.Generator) -> None:
    """Label the scene as it stands, render it, expose it and write the picture as ``name``."""
    scene, cam = built["scene"], built["camera"]
    labels, unclear, record = [], [], []
    for die in built["dice"]:
        x, y, w, h, upright, slant, face = top_face_box(scene, cam, die)
        inside = min(x - w / 2, y - h / 2) >= 0 and max(x + w / 2, y + h / 2) <= 1
        if not (-w / 2 < x < 1 + w / 2 and -h / 2 < y < 1 + h / 2):
            continue  # wholly out of the picture
        covered = _hidden(scene, die)
        edge_on = slant > GRAZING
        readable = upright > 0.97 and inside and die["state"] == "flat" and not covered and not edge_on
        line = f"{face - 1 if readable else 6} {x:.6f} {y:.6f} {w:.6f} {h:.6f}"
        (labels if readable else unclear).append(line)
        state = die["state"]
        if covered or not inside:
            state = "covered" if covered else "cut"
        elif edge_on and state == "flat":
            state = "edge-on"
        record.append({"face": face, "state": state, "x": round(x, 4), "y": round(y, 4),
                       "slant": round(slant, 1)})
    raw = out / "raw" / f"{name}.exr"
    scene.render.filepath = str(raw)
    bpy.ops.render.render(write_still=True)
    picture = auto_expose(linear_pixels(bpy, raw), float(scene["exposure_bias"]))
    for folder in ("labels", "labels_unclear", "scenes"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    (out / "labels" / f"{name}.txt").write_text("".join(line + "\n" for line in labels))
    (out / "labels_unclear" / f"{name}.txt").write_text("".join(line + "\n" for line in unclear))
    (out / "scenes" / f"{name}.json").write_text(json.dumps({
        "seed": picture_seed, "kind": built["kind"], "dice": record, "hand": built["hand"] is not None,
        "dice_look": built["look"], "dice_sets": built.get("sets", 1), "tray": built["tray"],
        "camera_height": round(built["height"], 3),
        "camera_tilt_degrees": round(built["tilt_degrees"], 1),
        "exposure_bias": round(float(scene["exposure_bias"]), 2),
        "camera": {"location": [round(v, 6) for v in cam.matrix_world.translation],
                   "rotation": [[round(v, 6) for v in row] for row in cam.matrix_world.to_3x3()],
                   "lens_mm": round(cam.data.lens, 4), "sensor_mm": cam.data.sensor_width}}, indent=1))
    finish(picture, out / "images" / f"{name}.jpg", finishing)
    raw.unlink()


def throw_again(bpy, built: dict, rng: np.random.Generator) -> None:
    """The same dice thrown again: each lying flat at a new place, face and turn (a die that
    leaned, or lay cut by the picture's edge, lies flat in the tray now; one with no room left
    where the camera sees rolled out of the picture)."""
    from mathutils import Matrix  # noqa: PLC0415

    placed: list[tuple[float, float]] = []
    for die in built["dice"]:
        edge = die["edge"]
        spot = free_spot(rng, built["reach"], placed, 1.6 * edge, 50)
        face = int(rng.integers(1, 7))
        rotation = up_rotation(face, float(rng.uniform(0, 2 * math.pi)))
        if spot is None:  # no room where the camera sees: the die rolled off, far out of the picture
            spot = (10.0 + len(placed), 10.0)
        die["object"].matrix_world = Matrix.Translation((spot[0], spot[1], edge / 2)) @ rotation.to_4x4()
        die.update(face=face, state="flat")
        placed.append(spot)
    bpy.context.view_layer.update()


def nudge_camera(bpy, built: dict, rng: np.random.Generator) -> None:
    """The camera knocked on its mount: moved 1 to 3 cm sideways, turned 2 to 6 degrees about
    its axis, and 2 to 5 degrees more or less tilted."""
    from mathutils import Vector  # noqa: PLC0415

    cam = built["camera"]
    angle = float(rng.uniform(0, 2 * math.pi))
    shift = float(rng.uniform(0.01, 0.03))
    cam.location = cam.location + Vector((shift * math.cos(angle), shift * math.sin(angle), 0))
    sign = float(rng.choice([-1.0, 1.0]))
    cam.rotation_euler.rotate_axis("Z", math.radians(sign * float(rng.uniform(2, 6))))
    cam.rotation_euler.rotate_axis("X", math.radians(float(rng.choice([-1.0, 1.0]) * rng.uniform(2, 5))))
    bpy.context.view_layer.update()
    looking = cam.matrix_world.to_3x3() @ Vector((0, 0, -1))  # the scene file says where it is now
    built["height"] = float(cam.location.z)
    built["tilt_degrees"] = math.degrees(math.acos(max(-1.0, min(1.0, -looking.z))))


def _hidden(scene, die: dict) -> bool:
    """Whether something (a hand, a wall, another die) hides the top face from the camera: the
    ray from its centre to the camera is blocked, or those from two of four points half way to
    its corners are."""
    obj = die["object"]
    world = obj.matrix_world
    _face, n, u, v = top_face(world)
    half = die["edge"] / 2
    lift = n * (half * 1.15)
    points = [world @ lift]
    points += [world @ (lift + (a * u + b * v) * half * 0.5) for a in (-1, 1) for b in (-1, 1)]
    graph = _depsgraph()
    blocked = []
    for start in points:
        towards = (scene.camera.location - start).normalized()
        hit, _loc, _n, _i, other, _m = scene.ray_cast(graph, start, towards)
        blocked.append(bool(hit and other is not None and other.name != obj.name))
    return blocked[0] or sum(blocked[1:]) >= 2


def _depsgraph():
    import bpy  # noqa: PLC0415

    return bpy.context.evaluated_depsgraph_get()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for images/, labels/, labels_unclear/, scenes/")
    parser.add_argument("--start", type=int, default=0, help="number of the first picture")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=240000, help="picture N is made from seed + N")
    parser.add_argument("--size", type=int, default=320, help="pixels, square")
    parser.add_argument("--samples", type=int, default=12, help="Cycles samples a pixel (denoised)")
    parser.add_argument("--kinds", default=DEFAULT_MIX, help=f"kind:share,... of {', '.join(KINDS)}")
    parser.add_argument("--throws", type=int, default=1,
                        help="pictures of each tray, the dice thrown again for each (rNNNNNN-t2 ...)")
    parser.add_argument("--moved", action="store_true",
                        help="then the camera nudged on its mount and as many throws again"
                             " (rNNNNNN-moved, rNNNNNN-moved-t2 ...)")
    args = parser.parse_args(argv)
    if args.throws < 1:
        parser.error("--throws must be 1 or more")
    mix = parse_mix(args.kinds)
    bpy = _bpy()
    (args.out / "images").mkdir(parents=True, exist_ok=True)
    (args.out / "raw").mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    for n, index in enumerate(range(args.start, args.start + args.count), start=1):
        name = render_one(bpy, args.out, index, args.seed, mix, args.size, args.samples,
                          args.throws, args.moved)
        print(f"{name}  {n}/{args.count}  {time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
