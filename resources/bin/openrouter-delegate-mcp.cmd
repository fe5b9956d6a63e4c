@echo off
rem openrouter-delegate-mcp: the MCP bridge Claude Code starts, from the packaged OpenRouter Delegate app.
rem Register it with: claude mcp add --scope user openrouter -- "full path of this file"
rem Runs the bundle electron-builder unpacks from the app's asar with the system Node, 20.19 or later: the
rem app's own Electron may not run as Node (its RunAsNode fuse is off; README, "Packaging").
rem OPENROUTER_DELEGATE_NODE names a node executable to use instead of the first one on PATH.
setlocal
set "ORD_NODE=%OPENROUTER_DELEGATE_NODE%"
if not "%ORD_NODE%"=="" goto run
where node >nul 2>nul
if errorlevel 1 (
  >&2 echo openrouter-delegate-mcp: needs Node.js 20.19 or later, and there is no node on PATH. Install it ^(https://nodejs.org^) or set OPENROUTER_DELEGATE_NODE to node.exe.
  exit /b 127
)
set "ORD_NODE=node"
:run
"%ORD_NODE%" "%~dp0..\app.asar.unpacked\dist\bridge\openrouter-delegate-mcp.js" %*
exit /b %ERRORLEVEL%
