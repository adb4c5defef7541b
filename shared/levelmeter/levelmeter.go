// Package levelmeter holds the audio level meter the pages Bridgeline serves share (the
// hosted join page and the sim's caller page): one script, File, which each page's
// handler serves beside its own files and each page loads before its own script. It
// defines window.bridgelineLevelMeter(ctx, mediaStreamTrack, onLevel, live).
//
// examples/call-us keeps a copy of its own: it is the customer's example, whose files a
// customer takes as they are, without Bridgeline's packages.
package levelmeter

import _ "embed"

// File is the script's name beside each page's files.
const File = "level-meter.js"

// JS is the script.
//
//go:embed level-meter.js
var JS []byte
