// Where focus goes when the screen changes under it: the new screen's heading, so a screen reader says where
// the user is and Tab starts from the top of the screen, not from the page body.

/** Focuses the heading of the screen shown, once it has rendered (a job's screen loads first). */
export function focusHeading(): void {
  let frames = 0;
  const attempt = () => {
    const heading = document.querySelector<HTMLElement>('#main h1');
    if (!heading) {
      if (++frames < 120) requestAnimationFrame(attempt);
      return;
    }
    heading.tabIndex = -1;
    heading.focus();
  };
  requestAnimationFrame(attempt);
}
