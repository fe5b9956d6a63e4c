import './lib/zod-csp.js';
import { mount } from 'svelte';
import App from './App.svelte';
import './styles/app.css';

const target = document.getElementById('app');
if (!target) throw new Error('The page has no #app element.');
mount(App, { target });
