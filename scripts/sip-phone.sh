#!/usr/bin/env bash
# One SIP phone call to a line of the local stack (`make run`): this script finds what
# it needs, sets up what is missing, dials with baresip and prints where the phone's
# recording of the call is and the call's record with its transcript. Run it from the clone, beside `make run`, in another terminal:
#
#   bash scripts/sip-phone.sh                          # says "What are your opening hours?"
#   bash scripts/sip-phone.sh --say "Do you open on Sunday?" --seconds 25
#   bash scripts/sip-phone.sh --video                  # a video call: the assistant's face
#
# What it finds or makes (docs/guide.md, "Call a line from a SIP phone"):
#   - the key: $BRIDGELINE_API_KEY when it is an sk_live_ key, else the one this script
#     saved in the phone's folder, else a new sk_live_ key for the dev account (its id from
#     the data folder's dev-account file) made with `bin/bridgeline admin key create
#     --live`. SIP trunks and SIP lines are live resources: an sk_test_ key (the one
#     `make run` printed) gets 403 live_key_required for them.
#   - the trunk: the one this script made before (its id and inbound credentials are
#     saved in the phone's folder: the API shows a trunk's password only when it makes
#     it), else a new one taking calls from 127.0.0.1 with credentials Bridgeline makes.
#     Its origination_uri is the SIP bridge's address, where the phone dials.
#   - the line: --number (default +15550100010) on that trunk; made when missing, with
#     --assistant or else the assistant answering the dev line +15550100001.
#   - the phone: a baresip folder (config, accounts, rec/) and speak.wav, the sentence
#     (flite) at 8 kHz, after --wait seconds of silence for the greeting, padded with
#     silence to the call's length: baresip hangs up when its WAV file ends.
#
# Options:
#   --say TEXT       what the phone says (default "What are your opening hours?")
#   --number E164    the line to call (default +15550100010)
#   --assistant ID   the assistant for a line this script makes
#   --seconds N      how long the call lasts (default 20)
#   --wait N         seconds of silence before the sentence (default 5)
#   --video          call the SIP video bridge with video: baresip sends its test picture
#                    (colour bars) as its camera and saves two frames it receives as PNG,
#                    the first after the answer (the connecting screen) and one while the
#                    assistant speaks (its avatar), in the phone's folder
# Environment: BRIDGELINE_API_URL (default http://127.0.0.1:$PORT, PORT 8080),
# BRIDGELINE_DATA (the stack's data folder, default data in the clone), BRIDGELINE_BIN
# (default bin/bridgeline), SIP_PHONE_DIR (default $BRIDGELINE_DATA/sip-phone),
# SIP_PHONE_PORT (the phone's SIP port, default 5070; baresip also takes the next one,
# for TLS, and the one after for its control socket with --video), SIP_PHONE_RTP_PORTS
# (default 10500-10599; not the bridges' 10000-10399).
# Needs curl, jq, flite, ffmpeg and baresip (`make run` installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

say="What are your opening hours?"
number="+15550100010"
assistant=""
seconds=20
wait=5
video=""
while [ $# -gt 0 ]; do
  case "$1" in
    --say) say="$2"; shift 2 ;;
    --number) number="$2"; shift 2 ;;
    --assistant) assistant="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --wait) wait="$2"; shift 2 ;;
    --video) video=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sip-phone: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
die() { echo "sip-phone: $*" >&2; exit 1; }
case "$seconds$wait" in *[!0-9]*) die "--seconds and --wait take whole seconds" ;; esac
[ "$wait" -lt "$seconds" ] || die "--wait ($wait) must be shorter than --seconds ($seconds)"
for tool in curl jq flite ffmpeg baresip; do
  command -v "$tool" >/dev/null || die "$tool is missing (bash scripts/install-media-deps.sh installs it)"
done

api="${BRIDGELINE_API_URL:-http://127.0.0.1:${PORT:-8080}}"
data="${BRIDGELINE_DATA:-data}"
case "$data" in /*) ;; *) data="$root/$data" ;; esac
bin="${BRIDGELINE_BIN:-$root/bin/bridgeline}"
dir="${SIP_PHONE_DIR:-$data/sip-phone}"
phone_port="${SIP_PHONE_PORT:-5070}"
rtp_ports="${SIP_PHONE_RTP_PORTS:-10500-10599}"
caller="+15559990001"
mkdir -p "$dir/rec"
chmod 700 "$dir"

# api METHOD PATH [BODY]: the answer's body on stdout; on an error status, the API's error
# on stderr and exit.
api() {
  local out status
  out="$(mktemp)"
  status="$(curl -sS -o "$out" -w '%{http_code}' -X "$1" "$api$2" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' ${3:+--data "$3"})" || { rm -f "$out"; die "no API at $api (is make run running?)"; }
  if [ "${status:0:1}" != 2 ]; then
    echo "sip-phone: $1 $2: HTTP $status $(cat "$out")" >&2
    rm -f "$out"
    return 1
  fi
  cat "$out"
  rm -f "$out"
}

# 1. An sk_live_ key of the dev account.
key="${BRIDGELINE_API_KEY:-}"
if [ "${key#sk_live_}" = "$key" ]; then
  key=""
  if [ -s "$dir/key" ]; then
    key="$(cat "$dir/key")"
    api GET /v1/lines >/dev/null 2>&1 || key=""
  fi
fi
if [ -z "$key" ]; then
  store="sqlite"
  if [ -f "$data/stack.json" ]; then store="$(jq -r .store "$data/stack.json")"; fi
  state="$data/dev-account.json"
  if [ "$store" != sqlite ]; then state="$data/dev-account-$store.json"; fi
  [ -f "$state" ] || die "no dev account in $state: start the stack with make run (or set BRIDGELINE_DATA)"
  account="$(jq -r .account_id "$state")"
  [ -x "$bin" ] || die "$bin is missing: make run builds it (or set BRIDGELINE_BIN)"
  key="$(BRIDGELINE_DATA="$data" "$bin" admin key create --account "$account" --live | jq -r .api_key)"
  (umask 077 && printf '%s\n' "$key" >"$dir/key")
  echo "sip-phone: made an sk_live_ key for the dev account $account (kept in $dir/key)"
fi

# 2. The trunk this phone calls through, with its inbound credentials.
trunk=""
if [ -s "$dir/trunk.json" ]; then
  trunk="$(jq -r .id "$dir/trunk.json")"
  api GET "/v1/sip_trunks/$trunk" >/dev/null 2>&1 || trunk=""
fi
if [ -z "$trunk" ]; then
  body="$(jq -n --arg out "127.0.0.1:$phone_port" \
    '{name: "SIP phone (scripts/sip-phone.sh)", inbound: {allowed_addresses: ["127.0.0.1"]}, outbound: {address: $out, transport: "udp"}}')"
  made="$(api POST /v1/sip_trunks "$body")"
  (umask 077 && jq '{id, username: .inbound.username, password: .inbound.password}' <<<"$made" >"$dir/trunk.json")
  trunk="$(jq -r .id "$dir/trunk.json")"
  echo "sip-phone: made the trunk $trunk (its credentials kept in $dir/trunk.json)"
fi
auth_user="$(jq -r .username "$dir/trunk.json")"
auth_pass="$(jq -r .password "$dir/trunk.json")"
trunk_json="$(api GET "/v1/sip_trunks/$trunk")"
bridge="$(jq -r .origination_uri <<<"$trunk_json")"
if [ -n "$video" ]; then
  bridge="$(jq -r '.video_origination_uri // empty' <<<"$trunk_json")"
  [ -n "$bridge" ] || die "the stack runs no SIP video bridge (its trunks show no video_origination_uri; is SIP_VIDEO_PORT off?)"
fi
bridge="${bridge#sip:}"

# 3. The line, answered by an assistant.
line_json="$(api GET '/v1/lines?limit=100' | jq -c --arg n "$number" '.data[] | select(.handle == $n)')"
if [ -z "$line_json" ]; then
  if [ -z "$assistant" ]; then
    assistant="$(api GET '/v1/lines?limit=100' | jq -r '.data[] | select(.handle == "+15550100001") | .assistant_id // empty')"
  fi
  [ -n "$assistant" ] || die "no assistant for $number: pass --assistant asst_..."
  line_json="$(api POST /v1/lines "$(jq -n --arg n "$number" --arg t "$trunk" --arg a "$assistant" \
    '{platform: "sip", handle: $n, sip_trunk_id: $t, assistant_id: $a}')")"
  echo "sip-phone: made the line $number on the trunk $trunk"
fi
line="$(jq -r .id <<<"$line_json")"
[ "$(jq -r .platform <<<"$line_json")" = sip ] || die "$number is a $(jq -r .platform <<<"$line_json") line, not a SIP line: pass another --number"
[ "$(jq -r .sip_trunk_id <<<"$line_json")" = "$trunk" ] ||
  die "$number is on the trunk $(jq -r .sip_trunk_id <<<"$line_json"), not this phone's $trunk: pass another --number"
echo "sip-phone: $number ($line): inbound_mode $(jq -r .inbound_mode <<<"$line_json"), assistant $(jq -r '.assistant_id // "none"' <<<"$line_json")"

# 4. What the phone says: the sentence at 8 kHz mono, after the greeting, padded with
#    silence to the call's length.
flite -t "$say" -o "$dir/say.wav"
ffmpeg -loglevel error -y -i "$dir/say.wav" -af "adelay=${wait}s:all=1,apad" -t "$seconds" \
  -ar 8000 -ac 1 -c:a pcm_s16le "$dir/speak.wav"

# 5. baresip's folder (the settings e2e/sipphone uses): aufile speaks, aubridge plays to
#    nowhere, sndfile records both sides in rec/, G.711 only, loopback only.
cat >"$dir/config" <<EOF
poll_method		epoll
sip_listen		127.0.0.1:$phone_port
net_interface		127.0.0.1
audio_player		aubridge,nil
audio_source		aufile,$dir/speak.wav
audio_alert		aubridge,nil
audio_srate		8000
audio_channels		1
rtp_ports		$rtp_ports
module_path		/usr/lib/baresip/modules
module			g711.so
module			aufile.so
module			aubridge.so
module			sndfile.so
snd_path		$dir/rec
module_app		account.so
module_app		menu.so
statmode_default	off
EOF
ctrl_port=$((phone_port + 2))
if [ -n "$video" ]; then
  cat >>"$dir/config" <<EOF
module			vp8.so
module			fakevideo.so
module			snapshot.so
video_source		fakevideo,nil
video_display		fakevideo,nil
video_size		352x288
video_fps		15
module_app		ctrl_tcp.so
ctrl_tcp_listen		127.0.0.1:$ctrl_port
EOF
fi
(umask 077 && printf '<sip:%s@127.0.0.1>;regint=0;auth_user=%s;auth_pass=%s\n' "$caller" "$auth_user" "$auth_pass" >"$dir/accounts")

# 6. The call: baresip dials at start and quits a little after the WAV ends.
rm -f "$dir"/rec/dump-*.wav
before="$(api GET "/v1/calls?line_id=$line&limit=1" | jq -r '.data[0].id // ""')"
echo "sip-phone: $caller calls sip:$number@$bridge for $seconds s, saying \"$say\""
if [ -n "$video" ]; then
  # The first frame the phone receives is the connecting screen; a second is asked for
  # (over baresip's control socket, a netstring) once the greeting plays.
  rm -f "$dir/first.png" "$dir/avatar.png"
  (
    sleep "$(( wait > 3 ? wait - 1 : 2 ))"
    cmd="{\"command\":\"snapshot_recv\",\"params\":\"$dir/avatar.png\"}"
    exec 3<>"/dev/tcp/127.0.0.1/$ctrl_port" && printf '%d:%s,' "${#cmd}" "$cmd" >&3 && sleep 1
  ) 2>/dev/null &
  baresip -f "$dir" -e "/snapshot_recv $dir/first.png" -e "/dial sip:$number@$bridge" -t "$((seconds + 3))" </dev/null >"$dir/baresip.log" 2>&1 || true
  wait
else
  baresip -f "$dir" -e "/dial sip:$number@$bridge" -t "$((seconds + 3))" </dev/null >"$dir/baresip.log" 2>&1 || true
fi

# 7. What the phone heard (its recording), and the call's record with its transcript.
heard="$(ls -t "$dir"/rec/dump-*-dec.wav 2>/dev/null | head -n 1 || true)"
[ -n "$heard" ] || die "the call did not connect; baresip's log: $dir/baresip.log"
secs="$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$heard" 2>/dev/null || echo "?")"
echo "sip-phone: the phone heard ${secs%%.*} s of the call, recorded in $heard (ffplay plays it)"
record=""
for _ in $(seq 1 40); do
  record="$(api GET "/v1/calls?line_id=$line&limit=1" | jq -c --arg before "$before" '.data[0] // empty | select(.id != $before)')"
  if [ -n "$record" ] && [ "$(jq -r .status <<<"$record")" = ended ] && [ "$(jq -r .assistant_report <<<"$record")" = received ]; then
    break
  fi
  sleep 0.5
done
[ -n "$record" ] || die "no call reached the line $number; baresip's log: $dir/baresip.log"
# The transcript: what the assistant said is what the phone heard; the caller's turns are
# what the stack's recogniser made of the sentence.
jq -r '"call \(.id): \(.status), \(.end_reason // "-"), \(.duration_ms // 0) ms, from \(.from) to \(.to), handled by \(.handled_by // "-") \(.assistant_id // "")",
  (.transcript // [] | .[] | "  \(.speaker): \(.text)")' <<<"$record"
if [ -n "$video" ]; then
  for f in first avatar; do
    [ -s "$dir/$f.png" ] || die "the phone saved no $f.png: it received no video; baresip's log: $dir/baresip.log"
  done
  echo "sip-phone: what the phone saw: $dir/first.png (the connecting screen) and $dir/avatar.png (the assistant speaking); media $(jq -r .media <<<"$record")"
fi
echo "sip-phone: the record in full: curl -sS '$api/v1/calls/$(jq -r .id <<<"$record")' -H \"Authorization: Bearer \$KEY\" (the sk_live_ key in $dir/key)"
