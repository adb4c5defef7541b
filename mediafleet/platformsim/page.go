package platformsim

import (
	"embed"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/bridgeline/bridgeline/shared/levelmeter"
)

// The browser caller page: a person places a sim call to a line from it and is the
// caller (PartyBrowser). Its files are embedded, its level meter is the join page's
// (shared/levelmeter); the LiveKit client SDK it loads is served from the npm package
// scripts/install-browser.sh installs.
//
//go:embed page/index.html page/caller.js page/style.css
var pageFiles embed.FS

// ClientSDKEnv names the variable the programs that run the sim read Config.ClientSDK
// from: the livekit-client browser bundle (dist/livekit-client.umd.js) the page loads.
const ClientSDKEnv = "LIVEKIT_CLIENT_JS"

const sdkName = "livekit-client.umd.js"

var pageTypes = map[string]string{
	"caller.js": "text/javascript; charset=utf-8",
	"style.css": "text/css; charset=utf-8",
}

func (s *Sim) pageRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sim/{$}", func(w http.ResponseWriter, r *http.Request) {
		servePageFile(w, "index.html", "text/html; charset=utf-8")
	})
	mux.HandleFunc("GET /sim/page/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		if name == sdkName {
			s.serveSDK(w, r)
			return
		}
		if name == levelmeter.File {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Write(levelmeter.JS)
			return
		}
		typ, ok := pageTypes[name]
		if !ok {
			writeError(w, http.StatusNotFound, "resource_not_found", fmt.Sprintf("no page file %q", name))
			return
		}
		servePageFile(w, name, typ)
	})
}

func servePageFile(w http.ResponseWriter, name, typ string) {
	b, err := pageFiles.ReadFile("page/" + name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "missing page file")
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

func (s *Sim) serveSDK(w http.ResponseWriter, r *http.Request) {
	path, err := clientSDKPath(s.cfg.ClientSDK)
	if err != nil {
		writeError(w, http.StatusNotFound, "resource_not_found",
			"the LiveKit client SDK is not installed: run scripts/install-browser.sh (make run does) or set LIVEKIT_CLIENT_JS")
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeFile(w, r, path)
}

// clientSDKPath finds the livekit-client browser bundle: p (Config.ClientSDK, from
// $LIVEKIT_CLIENT_JS), else .cache/node/node_modules/livekit-client/dist/
// livekit-client.umd.js in the working directory or the nearest folder above it that
// has one.
func clientSDKPath(p string) (string, error) {
	if p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", errors.New("sim: " + ClientSDKEnv + ": " + err.Error())
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ".cache", "node", "node_modules", "livekit-client", "dist", sdkName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("sim: the LiveKit client SDK is not installed: run `bash scripts/install-browser.sh`")
		}
		dir = parent
	}
}
