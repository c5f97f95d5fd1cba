def test_images():
    """Two deterministic 96x96 RGB pictures: a red sun over green hills under a blue sky, and a
    black and white checkerboard with a yellow square."""
    from PIL import Image, ImageDraw
    landscape = Image.new("RGB", (96, 96), (90, 150, 230))
    draw = ImageDraw.Draw(landscape)
    draw.ellipse((58, 10, 84, 36), fill=(230, 60, 40))
    draw.polygon([(0, 70), (30, 48), (60, 66), (96, 44), (96, 96), (0, 96)], fill=(40, 150, 60))
    board = Image.new("RGB", (96, 96), (255, 255, 255))
    draw = ImageDraw.Draw(board)
    for row in range(8):
        for column in range(8):
            if (row + column) % 2:
                draw.rectangle((column * 12, row * 12, column * 12 + 11, row * 12 + 11), fill=(0, 0, 0))
    draw.rectangle((36, 36, 59, 59), fill=(250, 220, 30))
    return [landscape, board]
