// bunco-pi Pico table box: a parametric enclosure (OpenSCAD 2021.01 or later).
//
// The Pico 2 W variant of table_box.scad: a small tray holding the Pico on four standoffs,
// its micro-USB socket at a slot in the end wall for the power bank's cable, and a lid with
// the OLED behind a window, the five tally buttons in a row in the order of
// hardware/pico-wiring.md (point, three, bunco, pass, undo, left to right as the scorekeeper
// sees them) and the ROLL button on its own at the right.
//
// Print the base and the lid flat, 0.2 mm layers, 3 walls, 15 % infill; no supports.
// Export one part at a time:  openscad -D 'part="lid"' -o pico_lid.stl pico_box.scad

/* [What to print] */
part = "both";          // "base", "lid", "both" (side by side: the box open) or "closed"
                        // (the lid on the base, for a picture)

/* [Buttons] */
button_count = 5;
button_hole = 12.5;     // 12 mm panel-mount buttons; 16.5 for 16 mm ones
button_pitch = 22;      // centre to centre
roll_hole = 12.5;       // the ROLL button (16.5 for a 16 mm panel button)
roll_gap = 30;          // from the last tally button to the ROLL button

/* [OLED window] */
window_w = 24;          // visible area of a 0.96" SSD1306; 1.3" SH1106: 31 x 16
window_h = 13;
oled_hole_dx = 23;      // the module's mounting holes (0.96": 23 x 23.5; 1.3": 30.5 x 28)
oled_hole_dy = 23.5;
oled_screw = 2.2;       // M2 screws

/* [Box] */
wall = 2;
floor_t = 2;
lid_t = 2.4;
height = 26;            // 12 mm panel-mount buttons need about 20 mm below the lid
margin = 12;
depth = 70;
usb_slot_w = 12;
usb_slot_h = 8;

$fn = 64;
width = 2 * margin + button_count * button_pitch + roll_gap;

// The Pico's mounting holes: 11.4 x 47 mm, for M2 screws.
pico_holes = [[0, 0], [47, 0], [0, 11.4], [47, 11.4]];

module rounded_box(size, r = 3) {
    hull() for (x = [r, size[0] - r], y = [r, size[1] - r])
        translate([x, y, 0]) cylinder(r = r, h = size[2]);
}

module standoff(h = 4) {
    difference() {
        cylinder(d = 5, h = h);
        cylinder(d = 1.8, h = h + 1);   // self-tapping M2
    }
}

module base() {
    pico_x = wall + 6;                  // the USB end of the Pico faces the left end wall
    pico_y = depth - wall - 10 - 11.4;
    difference() {
        rounded_box([width, depth, height]);
        translate([wall, wall, floor_t]) rounded_box([width - 2 * wall, depth - 2 * wall, height]);
        // The micro-USB cable comes in through the end wall, level with the Pico's socket.
        translate([-1, pico_y + 11.4 / 2 - usb_slot_w / 2, floor_t + 2])
            cube([wall + 2, usb_slot_w, usb_slot_h]);
        // A ledge the lid rests on.
        translate([wall / 2, wall / 2, height - lid_t])
            rounded_box([width - wall, depth - wall, lid_t + 1], r = 2);
    }
    translate([pico_x + 4.8, pico_y, floor_t - 0.5])   // sunk 0.5 mm: one solid
        for (p = pico_holes) translate([p[0], p[1], 0]) standoff();
}

module lid() {
    lw = width - wall - 0.4;            // 0.2 mm clearance all round
    ld = depth - wall - 0.4;
    difference() {
        rounded_box([lw, ld, lid_t], r = 2);
        for (i = [0 : button_count - 1])
            translate([margin + button_pitch * (i + 0.5), ld * 0.3, -1])
                cylinder(d = button_hole, h = lid_t + 2);
        translate([margin + button_count * button_pitch + roll_gap / 2, ld * 0.5, -1])
            cylinder(d = roll_hole, h = lid_t + 2);
        // The OLED above the middle of the tally buttons.
        oled_x = margin + button_count * button_pitch / 2;
        oled_y = ld * 0.72;
        translate([oled_x - window_w / 2, oled_y - window_h / 2, -1])
            cube([window_w, window_h, lid_t + 2]);
        for (sx = [-1, 1], sy = [-1, 1])
            translate([oled_x + sx * oled_hole_dx / 2, oled_y + sy * oled_hole_dy / 2, -1])
                cylinder(d = oled_screw, h = lid_t + 2);
    }
}

if (part == "base" || part == "both" || part == "closed") base();
if (part == "lid") lid();
if (part == "both") translate([0, depth + 10, 0]) lid();
// On its ledge: 0.2 mm in from the wall's inner half, its top flush with the rim.
if (part == "closed") translate([wall / 2 + 0.2, wall / 2 + 0.2, height - lid_t]) lid();
