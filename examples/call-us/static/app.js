// The "call us" page. "Call us" asks our backend for a call to our team (POST /api/call);
// "Talk to our assistant" asks it for a web call with our Bridgeline assistant (POST
// /api/assistant). Either way the backend asks Bridgeline for a hosted session and passes
// on only what joining needs: rtc_url, participant_token, expires_at and session_id. The
// page joins that one room with the LiveKit browser SDK, publishes camera and microphone,
// shows the other side's video with ours in the corner, meters their audio and our
// microphone, and, with the assistant, shows live captions of both sides (LiveKit's
// lk.transcription text streams). Hang up asks the backend to end a team call (POST
// /api/hangup); leaving a web call hangs it up. The room closing from the other side ends
// the call here too. window.callUs holds the state for whoever wants to look (tests do).
'use strict';

(() => {
  const LK = window.LivekitClient;
  const $ = (id) => document.getElementById(id);
  const state = {
    mode: null, session: null, room: null, audio: null, level: 0, peak: 0, micLevel: 0, micPeak: 0,
    captions: [], ended: null, disconnectReason: null,
  };
  window.callUs = state;

  function setState(name, text) {
    document.body.dataset.state = name;
    $('status').textContent = text;
  }

  async function post(path, body) {
    const r = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body || {}),
    });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || `${path}: ${r.status}`);
    return j;
  }

  // A LiveKit server on this machine (the local stack) hands out loopback candidates and
  // needs no STUN; elsewhere the servers LiveKit suggests are used.
  function rtcConfigFor(url) {
    const host = new URL(url).hostname;
    return ['127.0.0.1', 'localhost', '[::1]'].includes(host) ? { iceServers: [] } : undefined;
  }

  // meter follows an audio track: onLevel gets the RMS of the last 20 ms or so, every 50 ms,
  // until the call ends or the function it returns is called.
  function meter(mediaStreamTrack, onLevel) {
    const ctx = state.audio;
    ctx.resume();
    const an = ctx.createAnalyser();
    an.fftSize = 1024;
    const source = ctx.createMediaStreamSource(new MediaStream([mediaStreamTrack]));
    source.connect(an);
    const buf = new Float32Array(an.fftSize);
    let stopped = false;
    const timer = setInterval(() => {
      if (!state.room || stopped) {
        clearInterval(timer);
        source.disconnect();
        return;
      }
      an.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      onLevel(Math.sqrt(sum / buf.length));
    }, 50);
    return () => { stopped = true; };
  }

  function onTrack(track) {
    if (track.kind === 'video') {
      track.attach($('remote-video'));
    } else if (track.kind === 'audio') {
      $('audio-sink').appendChild(track.attach());
      meter(track.mediaStreamTrack, (l) => {
        state.level = l;
        state.peak = Math.max(state.peak, l);
        $('level').style.width = `${Math.min(100, Math.round(l * 400))}%`;
      });
    }
  }

  // caption shows one transcription stream: each turn of each side is one line (its
  // lk.segment_id), replaced by the turn's newer streams until the final one.
  function caption(reader, participant, text) {
    const attrs = reader.info.attributes || {};
    const segment = attrs['lk.segment_id'] || reader.info.id;
    const final = attrs['lk.transcription_final'] === 'true';
    const you = state.room && participant.identity === state.room.localParticipant.identity;
    let c = state.captions.find((x) => x.segment === segment);
    if (!c) {
      c = { segment, speaker: you ? 'you' : 'assistant', text: '', final: false, el: document.createElement('li') };
      c.el.className = c.speaker;
      state.captions.push(c);
      $('captions').appendChild(c.el);
      while ($('captions').children.length > 5) $('captions').firstElementChild.remove();
    }
    if (c.final && !final) return;
    Object.assign(c, { text, final });
    c.el.textContent = `${you ? 'You' : 'Assistant'}: ${text}`;
    c.el.classList.toggle('interim', !final);
  }

  function finish(text, failed) {
    if (state.ended) return;
    state.ended = text;
    const room = state.room;
    state.room = null;
    if (room) room.disconnect();
    delete $('self-view').dataset.live;
    $('remote-video').srcObject = null;
    $('audio-sink').replaceChildren();
    $('level').style.width = '0';
    $('mic-level').style.width = '0';
    $('call').disabled = false;
    $('assistant').disabled = false;
    $('hangup').disabled = true;
    setState(failed ? 'failed' : 'ended', text);
  }

  // start asks the backend for a call of mode ('call' or 'assistant') and joins it.
  async function start(mode) {
    if (!LK) {
      setState('failed', 'The LiveKit client SDK did not load.');
      return;
    }
    // Made inside the click, so the browser lets it play.
    state.audio = state.audio || new AudioContext();
    Object.assign(state, {
      mode, session: null, room: null, level: 0, peak: 0, micLevel: 0, micPeak: 0, captions: [], ended: null,
      disconnectReason: null, hangingUp: false,
    });
    document.body.dataset.mode = mode;
    $('captions').replaceChildren();
    $('placeholder').textContent = mode === 'assistant' ? 'Our assistant appears here.' : 'Our team appears here.';
    $('call').disabled = true;
    $('assistant').disabled = true;
    $('hangup').disabled = false;
    setState('calling', mode === 'assistant' ? 'Connecting you to our assistant…' : 'Calling…');
    try {
      const session = await post(mode === 'assistant' ? '/api/assistant' : '/api/call');
      state.session = session;
      const room = new LK.Room({ adaptiveStream: false, dynacast: false });
      state.room = room;
      room
        .on(LK.RoomEvent.TrackSubscribed, onTrack)
        .on(LK.RoomEvent.TrackUnsubscribed, (track) => track.detach())
        .on(LK.RoomEvent.Disconnected, (reason) => {
          state.disconnectReason = LK.DisconnectReason[reason] || String(reason);
          finish(state.hangingUp ? 'You hung up.' : 'The call ended.');
        });
      room.registerTextStreamHandler('lk.transcription', async (reader, participant) => {
        caption(reader, participant, await reader.readAll());
      });
      await room.connect(session.rtc_url, session.participant_token, { rtcConfig: rtcConfigFor(session.rtc_url) });
      await room.startAudio();
      await room.localParticipant.enableCameraAndMicrophone();
      const cam = room.localParticipant.getTrackPublication(LK.Track.Source.Camera);
      if (cam && cam.track) {
        cam.track.attach($('self-view'));
        $('self-view').dataset.live = '1';
      }
      const mic = room.localParticipant.getTrackPublication(LK.Track.Source.Microphone);
      if (mic && mic.track) {
        const onMicLevel = (l) => {
          state.micLevel = l;
          state.micPeak = Math.max(state.micPeak, l);
          $('mic-level').style.width = `${Math.min(100, Math.round(l * 400))}%`;
        };
        let stopMeter = meter(mic.track.mediaStreamTrack, onMicLevel);
        // The microphone may be captured anew during the call (restartTrack: another
        // device chosen, or the capture reopened): the meter follows the new capture.
        mic.track.on(LK.TrackEvent.Restarted, (track) => {
          stopMeter();
          stopMeter = meter(track.mediaStreamTrack, onMicLevel);
        });
      }
      if (!state.ended) setState('connected', 'You are connected.');
    } catch (err) {
      finish(`The call could not start: ${err.message}`, true);
    }
  }

  $('call').addEventListener('click', () => start('call'));
  $('assistant').addEventListener('click', () => start('assistant'));

  $('hangup').addEventListener('click', async () => {
    const session = state.session;
    state.hangingUp = true;
    try {
      // A team call is ended by our backend; a web call ends when its caller leaves.
      if (session && state.mode === 'call') await post('/api/hangup', { session_id: session.session_id });
    } catch (err) {
      // The room closing below ends the session anyway (the client left).
    } finally {
      finish('You hung up.');
    }
  });
})();
