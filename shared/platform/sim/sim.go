// Package sim is the simulated calling platform as the control plane knows it, with no
// media code: its name and the routes of its HTTP API. The sim itself (its parties, its
// rooms) is media fleet code, mediafleet/platformsim; the control plane reaches it in
// process or through a platform gateway (shared/platform/simclient).
package sim

// Name is the platform name the sim's lines record.
const Name = "sim"

// Patterns are the net/http patterns of the sim's HTTP API and its browser caller page,
// all served by the sim's handler (mediafleet/platformsim). The local stack mounts them
// as public routes (no API key) outside /v1 (httpapi.Passthrough); the sim writes its own
// responses: its JSON, and the page's HTML and scripts. A plain list, so the sim depends
// on no HTTP layer of the control plane, and the route table's tests need no media code.
var Patterns = []string{
	"POST /sim/calls", "GET /sim/calls",
	"GET /sim/calls/{id}", "POST /sim/calls/{id}/hangup",
	"POST /sim/calls/{id}/joined", "POST /sim/calls/{id}/say",
	"GET /sim/{$}", "GET /sim/page/{file}",
}
