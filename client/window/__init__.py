"""The pygame window: screens, layout, input and the practice table it plays."""

import os

# SDL reads these when pygame is imported, so they are set before any module imports it.
# High-DPI: real pixels where the OS would otherwise scale the window up and blur it.
os.environ.setdefault("SDL_WINDOWS_DPI_AWARENESS", "permonitorv2")
# One window class on X11, whatever started us (desktops and xdotool find the window by it).
os.environ.setdefault("SDL_VIDEO_X11_WMCLASS", "nerts-p2p")
# No "Hello from the pygame community" line in the middle of the terminal game's output.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
