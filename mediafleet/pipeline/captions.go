package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Live captions, in LiveKit's own convention, as LiveKit's agents publish transcriptions
// (livekit-agents' room output, the attributes its client SDKs name
// TranscriptionAttributes): each side's words of a turn are text streams on topic
// lk.transcription, each carrying
//
//   - lk.segment_id: one id per turn and side ("SG_" and 12 hex digits), the same on
//     every stream of the turn;
//   - lk.transcription_final: "false" while the words may still change, "true" on the
//     turn's last stream;
//   - lk.transcribed_track_id: the sid of the audio track the words were said on (the
//     caller's microphone, the assistant's audio);
//
// and sent on behalf of the participant who said them (the header's participant
// identity: the caller's for the caller's words; livekit-server lets an agent name
// another participant there), so a front end attributes them as it does an agent's.
// Every stream holds the turn's whole text so far, never a delta: a front end shows the
// latest stream of each segment. That is how LiveKit's agents send a user's interim
// transcripts, and it is what lets the assistant's final words be shorter than what was
// shown before them, cut where a barge-in cut its speech.
const (
	TopicTranscription = "lk.transcription"
	AttributeSegmentID = "lk.segment_id"
	AttributeFinal     = "lk.transcription_final"
	AttributeTrackID   = "lk.transcribed_track_id"
)

// maxChunk is the largest chunk of a stream's text, in bytes (LiveKit's SDKs cut at
// 15,000; a data channel message must stay under 16 KiB).
const maxChunk = 15000

// captionQueue bounds the words waiting to be sent; past it a caption is dropped (and
// logged) rather than holding up the conversation, which publishes without blocking.
const captionQueue = 64

// captions sends a call's Words to its room. add queues (the conversation's goroutines
// call it through Call.Publish); run sends, in order; close stops taking words and lets
// run send what is queued, then return.
type captions struct {
	c    *call
	room *lksdk.Room

	mu     sync.Mutex
	closed bool
	queue  chan speech.Words

	open map[speech.Speaker]string // the segment of each side's turn in progress (run's)
}

func newCaptions(c *call, room *lksdk.Room) *captions {
	return &captions{c: c, room: room, queue: make(chan speech.Words, captionQueue), open: map[speech.Speaker]string{}}
}

func (k *captions) add(w speech.Words) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	select {
	case k.queue <- w:
	default:
		k.c.log.Warn("caption queue full; dropping words", "speaker", w.Speaker, "final", w.Final)
	}
}

func (k *captions) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.closed {
		k.closed = true
		close(k.queue)
	}
}

// run sends each queued turn's words as one text stream, until close.
func (k *captions) run(context.Context) {
	for w := range k.queue {
		seg := k.open[w.Speaker]
		if seg == "" {
			seg = newSegmentID()
			k.open[w.Speaker] = seg
		}
		if w.Final {
			delete(k.open, w.Speaker)
		}
		if k.room.ConnectionState() != lksdk.ConnectionStateConnected {
			continue // the call is over for this room
		}
		sender, track := k.speakerOf(w.Speaker)
		attrs := map[string]string{AttributeSegmentID: seg, AttributeFinal: strconv.FormatBool(w.Final)}
		if track != "" {
			attrs[AttributeTrackID] = track
		}
		if err := k.send(sender, w.Text, attrs); err != nil {
			k.c.log.Warn("caption not sent", "speaker", w.Speaker, "err", err)
		}
	}
}

// speakerOf is who said words of a side, and the audio track they were said on.
func (k *captions) speakerOf(s speech.Speaker) (identity, trackSID string) {
	if s == speech.Assistant {
		k.c.mu.Lock()
		defer k.c.mu.Unlock()
		return k.room.LocalParticipant.Identity(), k.c.audioSID
	}
	identity = k.c.job.CallerIdentity
	if rp := k.room.GetParticipantByIdentity(identity); rp != nil {
		for _, tp := range rp.TrackPublications() {
			if tp.Source() == livekit.TrackSource_MICROPHONE {
				return identity, tp.SID()
			}
		}
	} else if identity == "" {
		// No caller named (a job of an older control plane): the first remote
		// participant that is not an agent is the caller.
		for _, rp := range k.room.GetRemoteParticipants() {
			if rp.Kind() != lksdk.ParticipantAgent {
				return rp.Identity(), ""
			}
		}
	}
	return identity, ""
}

// send writes text as one complete text stream on TopicTranscription from sender: its
// header (with the attributes), its chunks, and its trailer, each reliable.
func (k *captions) send(sender, text string, attrs map[string]string) error {
	id := randomHex(16)
	size := uint64(len(text))
	header := &livekit.DataPacket{ParticipantIdentity: sender, Value: &livekit.DataPacket_StreamHeader{
		StreamHeader: &livekit.DataStream_Header{
			StreamId: id, Timestamp: time.Now().UnixMilli(), Topic: TopicTranscription, MimeType: "text/plain",
			TotalLength: &size, Attributes: attrs,
			ContentHeader: &livekit.DataStream_Header_TextHeader{TextHeader: &livekit.DataStream_TextHeader{
				OperationType: livekit.DataStream_CREATE,
			}},
		}}}
	packets := []*livekit.DataPacket{header}
	for i, chunk := range chunkText(text) {
		packets = append(packets, &livekit.DataPacket{ParticipantIdentity: sender, Value: &livekit.DataPacket_StreamChunk{
			StreamChunk: &livekit.DataStream_Chunk{StreamId: id, ChunkIndex: uint64(i), Content: []byte(chunk)}}})
	}
	packets = append(packets, &livekit.DataPacket{ParticipantIdentity: sender, Value: &livekit.DataPacket_StreamTrailer{
		StreamTrailer: &livekit.DataStream_Trailer{StreamId: id}}})
	for _, p := range packets {
		if err := k.room.LocalParticipant.PublishDataPacket(rawPacket{p}, lksdk.WithDataPublishReliable(true)); err != nil {
			return err
		}
	}
	return nil
}

// chunkText cuts text into pieces of at most maxChunk bytes, never inside a character;
// an empty text is one empty chunk.
func chunkText(text string) []string {
	var out []string
	for len(text) > maxChunk {
		cut := maxChunk
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return append(out, text)
}

// newSegmentID is a segment id as LiveKit's agents make them: "SG_" and random digits.
func newSegmentID() string { return "SG_" + randomHex(6) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// rawPacket publishes a DataPacket as it is built (lksdk.DataPacket).
type rawPacket struct{ p *livekit.DataPacket }

func (r rawPacket) ToProto() *livekit.DataPacket { return r.p }
