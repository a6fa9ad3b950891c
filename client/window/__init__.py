"""The pygame window: screens, layout, input and the practice table it plays."""
