// Bridgeline's audio level meter, one source for the pages Bridgeline serves (the hosted
// join page, shared/joinpage, and the sim's caller page, mediafleet/platformsim): each
// loads it before its own script, which calls window.bridgelineLevelMeter.
'use strict';

// bridgelineLevelMeter follows an audio track's level through ctx, an AudioContext the
// page made inside a click (so the browser lets it run): every 50 ms onLevel gets the
// RMS of the last 1024 samples (about 20 ms), until live() is false.
window.bridgelineLevelMeter = function bridgelineLevelMeter(ctx, mediaStreamTrack, onLevel, live) {
  if (!ctx) return;
  // A context the browser left suspended runs once asked to (a no-op when it runs).
  ctx.resume().catch(() => {});
  const an = ctx.createAnalyser();
  an.fftSize = 1024;
  ctx.createMediaStreamSource(new MediaStream([mediaStreamTrack])).connect(an);
  const buf = new Float32Array(an.fftSize);
  const timer = setInterval(() => {
    if (!live()) {
      clearInterval(timer);
      return;
    }
    an.getFloatTimeDomainData(buf);
    let sum = 0;
    for (const v of buf) sum += v * v;
    onLevel(Math.sqrt(sum / buf.length));
  }, 50);
};
