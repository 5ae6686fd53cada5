from utils import get_usr

print(get_usr(1)["name"])
