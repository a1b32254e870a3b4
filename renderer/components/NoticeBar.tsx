import { useEffect, useState } from 'react';
import { useAppStore } from '../store/index.js';

/** Announcements: a polite live region that also shows the last notice for a few seconds. */
export function NoticeBar() {
  const notice = useAppStore((state) => state.notice);
  const [visibleId, setVisibleId] = useState<number | null>(null);
  useEffect(() => {
    if (!notice) return;
    setVisibleId(notice.id);
    const timer = setTimeout(() => setVisibleId(null), 6000);
    return () => clearTimeout(timer);
  }, [notice]);
  const isVisible = notice !== null && visibleId === notice.id;
  return (
    <div
      className={`notice ${isVisible ? 'is-visible' : ''} ${notice?.tone === 'error' ? 'is-error' : ''}`}
      role="status"
      aria-live="polite"
    >
      {isVisible ? notice.text : ''}
    </div>
  );
}
