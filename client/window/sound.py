"""Short sounds made from tones (no sound files to ship): a card placed, a move refused,
the stock turned, Nerts called. Silent where the machine has no audio device."""

from __future__ import annotations

import math
from array import array

import pygame

RATE = 22050
TONES: dict[str, list[tuple[float, float]]] = {  # name -> (frequency Hz, seconds) notes
    "place": [(660.0, 0.04)],
    "turn": [(330.0, 0.03)],
    "reject": [(220.0, 0.08), (180.0, 0.1)],
    "race": [(520.0, 0.07), (390.0, 0.12)],
    "nerts": [(523.0, 0.1), (659.0, 0.1), (784.0, 0.18)],
}


def _samples(notes: list[tuple[float, float]]) -> bytes:
    out = array("h")
    for freq, seconds in notes:
        n = int(RATE * seconds)
        for i in range(n):
            fade = min(1.0, (n - i) / (RATE * 0.01))  # no click at the end of a note
            out.append(int(9000 * fade * math.sin(2 * math.pi * freq * i / RATE)))
    return out.tobytes()


class Sounds:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._sounds: dict[str, pygame.mixer.Sound] = {}
        self.available = False
        if not enabled:
            return
        try:
            pygame.mixer.init(frequency=RATE, size=-16, channels=1)
            self._sounds = {
                name: pygame.mixer.Sound(buffer=_samples(n)) for name, n in TONES.items()
            }
            self.available = True
        except pygame.error:
            self.available = False  # no audio device: play on in silence

    def play(self, name: str) -> None:
        if self.enabled and self.available and name in self._sounds:
            self._sounds[name].play()
