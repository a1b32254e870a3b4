// Where focus goes when the screen changes under it: the new screen's heading, so a screen reader says where
// the user is and Tab starts from the top of the screen, not from the page body.

/** Focuses the heading of the screen shown (after it renders). */
export function focusHeading(): void {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>('#main h1');
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  });
}
