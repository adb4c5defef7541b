// Package assets holds the hosted join page's files (shared/joinpage): the page, its
// script and styles, and the livekit-client browser bundle it runs, which make writes
// here (scripts/build-join-page.sh: livekit-client as pinned in
// examples/internal/browser, installed from npm) and git ignores. Only the processes
// that serve the page import this package: the local stack and the join-page function.
package assets

import "embed"

// FS holds join.html, join.js, join.css and, once built, livekit-client.js.
//
//go:embed *.html *.js *.css
var FS embed.FS
