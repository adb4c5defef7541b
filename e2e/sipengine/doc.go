// Package sipengine holds the SIP engine's smoke tests, below Bridgeline's API: the real
// livekit-server, Redis and livekit-sip (mediafleet/livekitsip/siptest), the control
// plane's LiveKit client (shared/rtc/lkhttp's SIP calls) and baresip phones
// (e2e/sipphone). They prove what every later SIP step stands on: trunks and rules made
// by the client route a phone's call into a room, media flows both ways, keypad digits
// arrive, hang-ups and transfers work, and calls the trunk does not allow never reach a
// room.
package sipengine
