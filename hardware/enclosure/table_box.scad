// bunco-pi table box: a parametric enclosure (OpenSCAD 2021.01 or later).
//
// A tray that holds the Pi on standoffs, and a lid carrying the OLED behind a window and
// the tally buttons in a row, in the order of hardware/wiring.md: point, three, bunco,
// pass, undo (left to right, as the scorekeeper sees them). Set head = true for the head
// box: a wider lid with the big bell button and sound holes over the buzzer.
//
// Print the base and the lid flat, 0.2 mm layers, 3 walls, 15 % infill; no supports.
// Export one part at a time:  openscad -D 'part="lid"' -o lid.stl table_box.scad

/* [What to print] */
part = "both";          // "base", "lid", "both" (side by side: the box open) or "closed"
                        // (the lid on the base, for a picture)
head = false;           // true: the head box, with the bell button and buzzer holes
pi = "zero";            // "zero" (Zero 2 W) or "full" (Pi 3/4/5): standoff pattern

/* [Buttons] */
button_count = 5;
button_hole = 30;       // mounting hole: 30 for 30 mm arcade buttons, 24 for 24 mm, 12 for tactile
button_pitch = 42;      // centre to centre
bell_hole = 24;         // the bell button's thread; measure yours (60 mm domes vary)
bell_zone = 80;         // extra width of the head box's lid for the bell

/* [OLED window] */
window_w = 31;          // visible area of a 1.3" SH1106; 0.96" SSD1306: 24 x 13
window_h = 16;
oled_hole_dx = 30.5;    // the module's mounting holes (1.3": 30.5 x 28; 0.96": 23 x 23.5)
oled_hole_dy = 28;
oled_screw = 2.2;       // M2 screws

/* [Box] */
wall = 2.4;
floor_t = 2.4;
lid_t = 3;
height = 48;            // arcade buttons need about 40 mm under the lid
margin = 14;            // from the edge to the first button
depth = 100;
usb_slot_w = 14;        // power cable and the dice sensor's USB cable
usb_slot_h = 9;

$fn = 64;
width = 2 * margin + button_count * button_pitch + (head ? bell_zone : 0);

// Standoff hole patterns: Zero 58 x 23 mm, Pi 3/4/5 58 x 49 mm (M2.5).
pi_span = pi == "zero" ? 23 : 49;
pi_holes = [[0, 0], [58, 0], [0, pi_span], [58, pi_span]];

module rounded_box(size, r = 3) {
    hull() for (x = [r, size[0] - r], y = [r, size[1] - r])
        translate([x, y, 0]) cylinder(r = r, h = size[2]);
}

module standoff(h = 6.5) {
    difference() {
        cylinder(d = 6, h = h);
        cylinder(d = 2.7, h = h + 1);   // self-tapping M2.5
    }
}

module base() {
    difference() {
        rounded_box([width, depth, height]);
        translate([wall, wall, floor_t]) rounded_box([width - 2 * wall, depth - 2 * wall, height]);
        // Power and USB cables leave through the back wall, behind the Pi.
        for (x = [margin + 20, margin + 20 + usb_slot_w + 20])
            translate([x, depth - wall - 1, floor_t + 6]) cube([usb_slot_w, wall + 2, usb_slot_h]);
        // A ledge the lid rests on.
        translate([wall / 2, wall / 2, height - lid_t])
            rounded_box([width - wall, depth - wall, lid_t + 1], r = 2);
    }
    translate([margin + 10, depth - wall - 12 - pi_span, floor_t - 0.5])   // sunk 0.5 mm: one solid
        for (p = pi_holes) translate([p[0], p[1], 0]) standoff();
}

module button_centres() {
    for (i = [0 : button_count - 1])
        translate([margin + button_pitch * (i + 0.5), depth * 0.32, 0]) children();
}

module lid() {
    lw = width - wall - 0.4;        // 0.2 mm clearance all round
    ld = depth - wall - 0.4;
    difference() {
        rounded_box([lw, ld, lid_t], r = 2);
        button_centres() translate([0, 0, -1]) cylinder(d = button_hole, h = lid_t + 2);
        // The OLED sits centred above the buttons, its glass behind the window.
        oled_x = margin + button_count * button_pitch / 2;
        oled_y = ld * 0.74;
        translate([oled_x - window_w / 2, oled_y - window_h / 2, -1])
            cube([window_w, window_h, lid_t + 2]);
        for (sx = [-1, 1], sy = [-1, 1])
            translate([oled_x + sx * oled_hole_dx / 2, oled_y + sy * oled_hole_dy / 2, -1])
                cylinder(d = oled_screw, h = lid_t + 2);
        if (head) {
            bell_x = width - bell_zone / 2 - margin / 2;
            translate([bell_x, ld * 0.4, -1]) cylinder(d = bell_hole, h = lid_t + 2);
            // Sound holes above the buzzer.
            for (i = [-1 : 1], j = [-1 : 1])
                translate([bell_x + i * 6, ld * 0.8 + j * 6, -1]) cylinder(d = 3, h = lid_t + 2);
        }
    }
}

if (part == "base" || part == "both" || part == "closed") base();
if (part == "lid") lid();
if (part == "both") translate([0, depth + 10, 0]) lid();
// On its ledge: 0.2 mm in from the wall's inner half, its top flush with the rim.
if (part == "closed") translate([wall / 2 + 0.2, wall / 2 + 0.2, height - lid_t]) lid();
