@echo off
rem openrouter-mcp-config: settings from the terminal, from the packaged OpenRouter Delegate app.
rem Runs the bundle electron-builder unpacks from the app's asar with the system Node, 20.19 or later: the
rem app's own Electron may not run as Node (its RunAsNode fuse is off; README, "Packaging").
rem OPENROUTER_DELEGATE_NODE names a node executable to use instead of the first one on PATH.
setlocal
set "ORD_NODE=%OPENROUTER_DELEGATE_NODE%"
if not "%ORD_NODE%"=="" goto run
where node >nul 2>nul
if errorlevel 1 (
  >&2 echo openrouter-mcp-config: needs Node.js 20.19 or later, and there is no node on PATH. Install it ^(https://nodejs.org^) or set OPENROUTER_DELEGATE_NODE to node.exe.
  exit /b 127
)
set "ORD_NODE=node"
:run
"%ORD_NODE%" "%~dp0..\app.asar.unpacked\dist\cli\openrouter-mcp-config.js" %*
exit /b %ERRORLEVEL%
