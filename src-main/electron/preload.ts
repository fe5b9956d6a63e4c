// The settings window's preload (sandboxed: it may require 'electron' only; the build inlines the rest).
import { contextBridge, ipcRenderer } from 'electron';
import { API_GLOBAL } from './contract-api.js';
import { buildApi } from './preload-api.js';

contextBridge.exposeInMainWorld(API_GLOBAL, buildApi(ipcRenderer));
