import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { wireEvents } from './store/events.js';
import { useAppStore } from './store/index.js';
import './styles.css';

wireEvents();
void useAppStore.getState().init();

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
