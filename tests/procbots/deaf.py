"""Never reads its stdin."""
import time

time.sleep(60)
