/**
 * DOM updates coalesced per animation frame: a stream of deltas marks views dirty, and each view
 * renders at most once per frame, touching only its own nodes (never the whole transcript).
 */
export interface FrameView {
  render(): void;
}

const dirty = new Set<FrameView>();
const after = new Set<() => void>();
let scheduled = false;

export function schedule(view: FrameView): void {
  dirty.add(view);
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(flushFrame);
  }
}

/** Runs once after the views of the next frame have rendered (e.g. keep the transcript scrolled). */
export function afterRender(task: () => void): void {
  after.add(task);
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(flushFrame);
  }
}

function flushFrame(): void {
  scheduled = false;
  const views = [...dirty];
  dirty.clear();
  for (const view of views) view.render();
  const tasks = [...after];
  after.clear();
  for (const task of tasks) task();
}
